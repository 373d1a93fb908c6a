// The span recorder behind trace.hpp: per-thread buffers registered once, a generation number
// that start() bumps (a thread's first span after it takes the next tid of its rank), and a
// gather of every rank's events, as text, to rank 0.

#include "core/trace.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "core/check.hpp"

namespace cala::detail::trace {

std::atomic<bool> g_on{false};

namespace {

struct Event {
    std::int64_t t0, t1;
    const char* name;
    Kind kind;
};

struct ThreadBuf {
    std::vector<Event> events;
    std::uint64_t gen = 0;  // the start() its events belong to
    int tid = -1;
};

struct Registry {
    std::mutex mu;
    std::vector<std::shared_ptr<ThreadBuf>> bufs;  // shared: a buffer outlives its thread
    std::atomic<std::uint64_t> gen{0};
    std::atomic<int> next_tid{0};
    std::int64_t epoch = 0;
};

Registry& reg() {
    static Registry r;
    return r;
}

ThreadBuf& my_buffer() {
    thread_local std::shared_ptr<ThreadBuf> b;
    Registry& r = reg();
    if (!b) {
        b = std::make_shared<ThreadBuf>();
        std::lock_guard<std::mutex> lock(r.mu);
        r.bufs.push_back(b);
    }
    const std::uint64_t gen = r.gen.load(std::memory_order_acquire);
    if (b->gen != gen) {
        b->events.clear();
        b->gen = gen;
        b->tid = r.next_tid.fetch_add(1);
    }
    return *b;
}

// ns as microseconds with three exact decimals.
void put_us(std::string& out, std::int64_t ns) {
    char buf[40];
    const long long a = ns < 0 ? -static_cast<long long>(ns) : static_cast<long long>(ns);
    std::snprintf(buf, sizeof buf, "%s%lld.%03lld", ns < 0 ? "-" : "", a / 1000, a % 1000);
    out += buf;
}

}  // namespace

const char* kind_name(Kind k) noexcept {
    switch (k) {
        case Kind::Potrf: return "potrf";
        case Kind::Trsm: return "trsm";
        case Kind::Gemm: return "gemm";
        case Kind::Herk: return "herk";
        case Kind::Panel: return "panel";
        case Kind::Bcast: return "bcast";
        case Kind::Wait: return "wait";
        case Kind::Transfer: return "transfer";
    }
    return "?";
}

std::int64_t now_ns() noexcept {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

void record(Kind kind, const char* name, std::int64_t t0, std::int64_t t1) noexcept {
    if (!g_on.load(std::memory_order_acquire)) return;
    try {
        my_buffer().events.push_back({t0, t1, name, kind});
    } catch (...) {  // out of memory: the span is lost, the run goes on
    }
}

void set_thread_track(int tid) noexcept {
    if (!g_on.load(std::memory_order_acquire)) return;
    try {
        my_buffer().tid = tid;
    } catch (...) {
    }
}

void start(MPI_Comm comm) {
    Registry& r = reg();
    g_on.store(false);
    {
        std::lock_guard<std::mutex> lock(r.mu);
        for (auto& b : r.bufs) b->events.clear();
        r.next_tid.store(0);
        r.gen.fetch_add(1, std::memory_order_release);
    }
    CALA_CHECK_MPI(MPI_Barrier(comm));
    r.epoch = now_ns();
    g_on.store(true, std::memory_order_release);
}

void stop() noexcept { g_on.store(false, std::memory_order_release); }

std::string local_events_json(int pid) {
    Registry& r = reg();
    std::vector<std::shared_ptr<ThreadBuf>> bufs;
    {
        std::lock_guard<std::mutex> lock(r.mu);
        bufs = r.bufs;
    }
    const std::uint64_t gen = r.gen.load();
    std::erase_if(bufs, [gen](const auto& b) { return b->gen != gen || b->events.empty(); });
    std::sort(bufs.begin(), bufs.end(), [](const auto& a, const auto& b) { return a->tid < b->tid; });
    std::string out;
    for (const auto& b : bufs)
        for (const Event& e : b->events) {
            if (!out.empty()) out += ",\n";
            out += "{\"name\":\"";
            out += e.name;
            out += "\",\"cat\":\"";
            out += kind_name(e.kind);
            out += "\",\"ph\":\"X\",\"ts\":";
            put_us(out, e.t0 - r.epoch);
            out += ",\"dur\":";
            put_us(out, e.t1 - e.t0);
            out += ",\"pid\":" + std::to_string(pid) + ",\"tid\":" + std::to_string(b->tid) + "}";
        }
    return out;
}

void write(MPI_Comm comm, const std::string& path) {
    int rank = 0, size = 0;
    CALA_CHECK_MPI(MPI_Comm_rank(comm, &rank));
    CALA_CHECK_MPI(MPI_Comm_size(comm, &size));
    const std::string mine = local_events_json(rank);
    int len = static_cast<int>(mine.size());
    std::vector<int> lens(static_cast<std::size_t>(size)), offs(static_cast<std::size_t>(size));
    CALA_CHECK_MPI(MPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, comm));
    std::string all;
    if (rank == 0) {
        int total = 0;
        for (int i = 0; i < size; ++i) offs[i] = std::exchange(total, total + lens[i]);
        all.resize(static_cast<std::size_t>(total));
    }
    CALA_CHECK_MPI(MPI_Gatherv(mine.data(), len, MPI_CHAR, all.data(), lens.data(), offs.data(), MPI_CHAR, 0, comm));
    int ok = 1;
    if (rank == 0) {
        std::ofstream f(path);
        f << "{\"traceEvents\":[\n";
        bool first = true;
        for (int i = 0; i < size; ++i) {
            if (lens[i] == 0) continue;
            if (!first) f << ",\n";
            f.write(all.data() + offs[i], lens[i]);
            first = false;
        }
        f << "\n],\"displayTimeUnit\":\"ms\"}\n";
        ok = f.good() ? 1 : 0;
    }
    CALA_CHECK_MPI(MPI_Bcast(&ok, 1, MPI_INT, 0, comm));
    if (!ok) throw Error(cat("trace: rank 0 cannot write the trace file '", path, "'"));
}

}  // namespace cala::detail::trace
