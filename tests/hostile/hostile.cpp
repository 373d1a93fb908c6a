// The hostile-input table runner: watchdog, agreement of the outcome over the ranks, snapshots.

#include "hostile/hostile.hpp"

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <thread>

namespace cala::hostile {

void Guard::watch(const void* p, std::size_t bytes) {
    const auto* b = static_cast<const unsigned char*>(p);
    regions_.push_back({p, std::vector<unsigned char>(b, b + bytes)});
}

bool Guard::untouched() const {
    for (const auto& r : regions_)
        if (std::memcmp(r.p, r.bytes.data(), r.bytes.size()) != 0) return false;
    return true;
}

namespace {

// One thread for the process; arm() before a row, disarm() after. The thread calls no MPI.
class Watchdog {
public:
    static Watchdog& get() {
        static Watchdog w;
        return w;
    }
    void arm(const std::string& what) {
        int rank = -1;
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);  // here, on the thread that calls MPI
        std::lock_guard lock(m_);
        rank_ = rank;
        what_ = what;
        deadline_ = std::chrono::steady_clock::now() +
                    std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(limit_s_));
        armed_ = true;
    }
    void disarm() {
        std::lock_guard lock(m_);
        armed_ = false;
    }

private:
    Watchdog() {
        if (const char* t = std::getenv("CALA_HOSTILE_TIMEOUT_S")) limit_s_ = std::atof(t);
        std::thread([this] { loop(); }).detach();
    }
    void loop() {
        for (;;) {
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
            std::lock_guard lock(m_);
            if (armed_ && std::chrono::steady_clock::now() > deadline_) {
                std::fprintf(stderr, "hostile watchdog: rank %d: row \"%s\" still running after %g s: a hang\n", rank_,
                             what_.c_str(), limit_s_);
                std::fflush(stderr);
                std::_Exit(124);
            }
        }
    }
    std::mutex m_;
    std::string what_;
    std::chrono::steady_clock::time_point deadline_;
    bool armed_ = false;
    int rank_ = -1;
    double limit_s_ = 60;
};

struct Summary {
    std::map<std::string, int> rows;
    int rank = -1;  // of MPI_COMM_WORLD, set by run_table (MPI is finalized when this prints)
    ~Summary() {
        if (rank != 0) return;
        int total = 0;
        for (const auto& [entry, n] : rows) {
            std::printf("hostile table %-22s %3d rows\n", entry.c_str(), n);
            total += n;
        }
        std::printf("hostile tables: %d rows in all\n", total);
    }
};
Summary summary;

bool all(const Comm& comm, bool ok) {
    int v = ok ? 1 : 0;
    MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT, MPI_MIN, comm.get());
    return v == 1;
}

// The same string on every rank (FNV-1a hash and length, min == max).
bool same_everywhere(const Comm& comm, const std::string& s) {
    std::uint64_t h = 1469598103934665603ull;
    for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
    std::int64_t v[4] = {static_cast<std::int64_t>(h >> 1), -static_cast<std::int64_t>(h >> 1),
                         static_cast<std::int64_t>(s.size()), -static_cast<std::int64_t>(s.size())};
    MPI_Allreduce(MPI_IN_PLACE, v, 4, MPI_INT64_T, MPI_MAX, comm.get());
    return v[0] == -v[1] && v[2] == -v[3];
}

}  // namespace

void run_table(const Comm& comm, const std::string& entry, const std::vector<Row>& rows, const Guard& guard) {
    if (summary.rank < 0) MPI_Comm_rank(MPI_COMM_WORLD, &summary.rank);
    for (const Row& row : rows) {
        const std::string what = entry + ": " + row.name;
        INFO(what);
        std::string msg;
        bool threw = false, foreign = false;
        Watchdog::get().arm(what);
        try {
            row.call();
        } catch (const Error& e) {
            threw = true;
            msg = e.what();
        } catch (const std::exception& e) {
            foreign = true;
            msg = std::string("not a cala::Error: ") + e.what();
        }
        Watchdog::get().disarm();
        INFO("message on rank " << comm.rank() << ": " << msg);
        CHECK(all(comm, !foreign));
        if (!row.expect.empty()) {
            CHECK(all(comm, threw && msg.find(row.expect) != std::string::npos));
            CHECK(same_everywhere(comm, msg));
            CHECK(all(comm, guard.untouched()));
        } else {
            CHECK(all(comm, !threw));
            if (row.after) CHECK(all(comm, row.after()));
        }
        ++summary.rows[entry];
    }
}

}  // namespace cala::hostile
