// cala::mw::gemm -> checks (agreed on every rank) -> discover (or given platform) -> plan and
// predict (master) -> run_master | run_worker -> kernels::gemm (BLIS) on q x q blocks

#include <mpi.h>
#include <sys/prctl.h>

#include <cmath>
#include <cstring>

#include "core/check.hpp"
#include "mw/plan.hpp"
#include "mw/runtime.hpp"

namespace cala::mw {

namespace {

using cala::detail::cat;

struct Hash {
    std::uint64_t h = 1469598103934665603ull;
    template <class X>
    void add(const X& x) {
        unsigned char bytes[sizeof(X)];
        std::memcpy(bytes, &x, sizeof(X));
        for (unsigned char b : bytes) h = (h ^ b) * 1099511628211ull;
    }
    template <class X>
    void add_all(const std::vector<X>& v) {
        add(v.size());
        for (const X& x : v) add(x);
    }
};

std::uint64_t fingerprint(index_t m, index_t n, index_t k, std::size_t elem, const Options& o) {
    Hash h;
    h.add(m), h.add(n), h.add(k), h.add(elem);
    h.add(o.strategy), h.add(o.master), h.add(o.q), h.add(o.poll_interval_s);
    h.add_all(o.memory_bytes);
    h.add_all(o.emulation.compute_slowdown);
    h.add_all(o.emulation.link_slowdown);
    h.add(o.platform.has_value());
    if (o.platform) {
        h.add(o.platform->q);
        h.add(o.platform->workers.size());
        for (const Worker& w : o.platform->workers) h.add(w.c), h.add(w.w), h.add(w.m);
    }
    return h.h;
}

std::int64_t memory_of(const Options& o, int w) {
    return o.memory_bytes.size() == 1 ? o.memory_bytes[0] : o.memory_bytes[w];
}

// The memory of each worker in blocks of q, or a message naming the first worker without room
// for one step.
std::string memory_blocks(const Options& o, int np, index_t q, std::size_t elem,
                          std::vector<std::int64_t>& out) {
    out.assign(np, 0);
    for (int w = 0; w < np; ++w) {
        out[w] = memory_of(o, w) / (q * q * static_cast<std::int64_t>(elem));
        if (out[w] < 5)
            return cat(
                "mw::gemm: worker ", w, " (rank ", detail::rank_of(w, o.master),
                ") has memory for ", out[w], " blocks of ", q, "x", q, " (memory_bytes ",
                memory_of(o, w),
                "), but one step of the maximum re-use layout needs 5 (mu^2 + 4 mu with mu = 1)");
    }
    return {};
}

template <class T>
std::string check(index_t m, index_t n, index_t k, const T* a, index_t lda, const T* b, index_t ldb,
                  const T* c, index_t ldc, const Comm& comm, const Options& o) {
    const int size = comm.size(), np = size - 1;
    if (size < 2)
        return cat("mw::gemm: no workers: the communicator has ", size, " rank (the master only)");
    if (o.master < 0 || o.master >= size)
        return cat("mw::gemm: master is rank ", o.master, ", not in [0, ", size, ")");
    if (m < 0 || n < 0 || k < 0)
        return cat("mw::gemm: sizes m = ", m, ", n = ", n, ", k = ", k, " must be >= 0");
    if (o.strategy < Strategy::Het || o.strategy > Strategy::BMM)
        return cat("mw::gemm: strategy is ", static_cast<int>(o.strategy), ", not a Strategy");
    if (!(o.poll_interval_s >= 0 && o.poll_interval_s <= 0.1))
        return cat("mw::gemm: poll_interval_s is ", o.poll_interval_s, ", must be in [0, 0.1]");
    for (auto [name, v] : {std::pair{"compute_slowdown", &o.emulation.compute_slowdown},
                           std::pair{"link_slowdown", &o.emulation.link_slowdown}}) {
        if (!v->empty() && static_cast<int>(v->size()) != np)
            return cat("mw::gemm: emulation.", name, " has ", v->size(), " factors for ", np,
                       " workers");
        for (std::size_t w = 0; w < v->size(); ++w)
            if (!((*v)[w] >= 1) || !std::isfinite((*v)[w]))
                return cat("mw::gemm: emulation.", name, " of worker ", w, " (rank ",
                           detail::rank_of(static_cast<int>(w), o.master), ") is ", (*v)[w],
                           ", must be >= 1");
    }
    if (o.platform) {
        if (static_cast<int>(o.platform->workers.size()) != np)
            return cat("mw::gemm: the platform describes ", o.platform->workers.size(),
                       " workers but the communicator has ", np, " ranks besides the master");
        if (auto e = detail::validate_message(*o.platform, "mw::gemm", o.master); !e.empty())
            return e;
    } else {
        if (o.q < 0)
            return cat("mw::gemm: q is ", o.q, ", must be >= 0 (0: chosen from the BLAS rate)");
        if (o.memory_bytes.size() != 1 && static_cast<int>(o.memory_bytes.size()) != np)
            return cat("mw::gemm: memory_bytes has ", o.memory_bytes.size(), " values for ", np,
                       " workers (give one, or one per worker)");
        if (o.q > 0) {
            std::vector<std::int64_t> mb;
            if (auto e = memory_blocks(o, np, o.q, sizeof(T), mb); !e.empty()) return e;
        }
    }
    if (comm.rank() == o.master) {
        if (lda < std::max<index_t>(1, m))
            return cat("mw::gemm: lda is ", lda, ", must be >= max(1, m = ", m, ")");
        if (ldb < std::max<index_t>(1, k))
            return cat("mw::gemm: ldb is ", ldb, ", must be >= max(1, k = ", k, ")");
        if (ldc < std::max<index_t>(1, m))
            return cat("mw::gemm: ldc is ", ldc, ", must be >= max(1, m = ", m, ")");
        if (m > 0 && n > 0 && k > 0 && (a == nullptr || b == nullptr || c == nullptr))
            return "mw::gemm: A, B and C must not be null on the master";
    }
    return {};
}

// Timer slack of the calling thread lowered to 1 us while mw::gemm runs, so that a nap of
// poll_interval_s lasts about that long (the default slack adds 50 us to every sleep).
class TimerSlack {
public:
    TimerSlack() : old_(prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0)) {
        if (old_ > 0) prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
    }
    ~TimerSlack() {
        if (old_ > 0) prctl(PR_SET_TIMERSLACK, static_cast<unsigned long>(old_), 0, 0, 0);
    }
    TimerSlack(const TimerSlack&) = delete;
    TimerSlack& operator=(const TimerSlack&) = delete;

private:
    long old_;
};

// A barrier that sleeps between tests (MPI_Barrier spins in MPICH).
void polite_barrier(const Comm& comm, double poll) {
    MPI_Request r;
    CALA_CHECK_MPI(MPI_Ibarrier(comm.get(), &r));
    int done = 0;
    for (;;) {
        CALA_CHECK_MPI(MPI_Test(&r, &done, MPI_STATUS_IGNORE));
        if (done) return;
        detail::nap(poll);
    }
}

}  // namespace

template <class T>
Report gemm(index_t m, index_t n, index_t k, const T* a, index_t lda, const T* b, index_t ldb, T* c,
            index_t ldc, const Comm& comm_in, const Options& o) {
    const std::string err = check(m, n, k, a, lda, b, ldb, c, ldc, comm_in, o);
    comm_in.agree(err, err.empty() ? fingerprint(m, n, k, sizeof(T), o) : 0, "mw::gemm");
    Report rep;
    rep.strategy = o.strategy;
    if (m == 0 || n == 0 || k == 0) return rep;  // C += 0: nothing to move

    const TimerSlack slack;
    const Comm comm = comm_in.dup();
    const int np = comm.size() - 1;
    const bool is_master = comm.rank() == o.master;
    const double poll = o.poll_interval_s;
    Platform plat;
    if (o.platform) {
        plat = *o.platform;
    } else {
        index_t q = o.q;
        if (q == 0) {
            if (is_master) q = detail::choose_block_size<T>(std::max({m, n, k}));
            std::vector<Request> r;
            r.push_back(comm.ibcast(&q, 1, o.master));
            detail::wait_polling(r, poll);
        }
        std::vector<std::int64_t> mb;
        if (auto e = memory_blocks(o, np, q, sizeof(T), mb); !e.empty())
            throw Error(e);  // every rank
        const double t0 = detail::now_s();
        plat = detail::discover<T>(comm, o.master, q, mb, o.emulation, poll, 10);
        rep.discovery_s = detail::now_s() - t0;
    }
    rep.platform.q = plat.q;

    const Traffic before = traffic();
    const detail::Dims d = detail::make_dims(m, n, k, plat.q);
    detail::Plan plan;
    if (is_master) {
        const double t0 = detail::now_s();
        plan = detail::make_plan(plat, d, o.strategy);
        const detail::SimResult sim = detail::run_plan(plat, d, plan);
        rep.planning_s = detail::now_s() - t0;
        rep.predicted_makespan_s = sim.makespan;
        rep.model = sim.traffic;
        rep.variant = plan.variant;
        rep.platform = plat;
    }
    polite_barrier(comm, poll);
    if (is_master) {
        detail::run_master<T>(comm, plan, d, a, lda, b, ldb, c, ldc, o.emulation.link_slowdown,
                              poll, rep);
    } else {
        const int me = detail::worker_of(comm.rank(), o.master);
        const double f =
            o.emulation.compute_slowdown.empty() ? 1.0 : o.emulation.compute_slowdown[me];
        rep.blocks_peak = {detail::run_worker<T>(comm, o.master, f, poll)};
    }
    rep.traffic = traffic() - before;
    return rep;
}

#define CALA_MW_GEMM_INST(T)                                                                     \
    template Report gemm<T>(index_t, index_t, index_t, const T*, index_t, const T*, index_t, T*, \
                            index_t, const Comm&, const Options&);
CALA_FOR_EACH_TYPE(CALA_MW_GEMM_INST)

}  // namespace cala::mw
