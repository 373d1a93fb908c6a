// Waiting without spinning, medians, control messages.
//
// Why not MPI_Wait: MPICH (ch4) polls inside MPI_Wait and keeps its core busy. With 1 master and
// 2 workers on 2 cores a spinning master takes half of each worker's core. The master therefore
// tests its requests and sleeps `poll_interval_s` between tests (docs/mw.md: measured CPU use).

#include <mpi.h>
#include <time.h>

#include <algorithm>
#include <cmath>
#include <utility>

#include "core/check.hpp"
#include "mw/runtime.hpp"

namespace cala::mw::detail {

void nap(double seconds) {
    if (!(seconds > 0)) return;
    timespec ts;
    ts.tv_sec = static_cast<time_t>(seconds);
    ts.tv_nsec = static_cast<long>((seconds - static_cast<double>(ts.tv_sec)) * 1e9);
    while (nanosleep(&ts, &ts) != 0) {
    }
}

double now_s() { return MPI_Wtime(); }

void wait_polling(std::vector<Request>& rs, double interval) {
    std::size_t i = 0;
    poll_until(
        [&] {
            while (i < rs.size() && rs[i].test()) ++i;
            return i == rs.size();
        },
        interval);
}

double median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const std::size_t h = v.size() / 2;
    return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

// ---- CtrlSender

void CtrlSender::send(std::int64_t v) {
    Msg m{std::make_unique<std::int64_t>(v), Request()};
    m.r = comm_.isend(m.v.get(), 1, dest_, kTagCtrl);
    live_.push_back(std::move(m));
}

void CtrlSender::progress() {
    std::erase_if(live_, [](Msg& m) { return m.r.test(); });
}

}  // namespace cala::mw::detail
