// Timing of cala::potrs against the local BLAS rate measured in the same run (not a test: a
// timing is never an assertion). One JSON line on stdout from rank 0.
//
//   mpiexec.mpich -n 2 time_potrs [n=4096] [nrhs=64] [nb=256] [p q] [runs=5] [potrs|N|C] [lookahead=1]
//
// The reference is the same two solves (kernels::trsm, L then Lᴴ) on one rank with the whole
// matrix, run on rank 0 while the others wait. Time = max over ranks of the median of `runs`
// (after one warm-up), barrier before and after each run.

#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cala/cala.hpp"
#include "kernels/blas.hpp"

using namespace cala;

namespace {

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

// A lower triangle with a dominant diagonal, entries from a cheap hash of (i, j).
double entry(index_t i, index_t j, index_t n) {
    if (i == j) return 2.0 + static_cast<double>((i * 7) % 5) / 5.0;
    const auto h = static_cast<std::uint64_t>(i * 2654435761u + j * 40503u) % 1000;
    return (static_cast<double>(h) / 500.0 - 1.0) / static_cast<double>(n);
}

}  // namespace

int main(int argc, char** argv) {
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    {
        const Comm world = Comm::borrow(MPI_COMM_WORLD);
        const index_t n = argc > 1 ? std::atol(argv[1]) : 4096, nrhs = argc > 2 ? std::atol(argv[2]) : 64;
        const index_t nb = argc > 3 ? std::atol(argv[3]) : 256;
        auto [p, q] = Grid2D::squarest(world.size());
        if (argc > 5) p = std::atoi(argv[4]), q = std::atoi(argv[5]);
        const int runs = argc > 6 ? std::atoi(argv[6]) : 5;
        const std::string what = argc > 7 ? argv[7] : "potrs";  // or "N", "C": one trsm with L
        const int lookahead = argc > 8 ? std::atoi(argv[8]) : 1;
        const Grid2D grid(world, p, q);
        DistMatrix<double> l(grid, n, n, nb, nb), b(grid, n, nrhs, nb, nb), b0(grid, n, nrhs, nb, nb);
        const Dist1D& R = l.layout().rows;
        const Dist1D& C = l.layout().cols;
        for (index_t jl = 0; jl < l.n_loc(); ++jl)
            for (index_t il = 0; il < l.m_loc(); ++il) {
                const index_t i = R.to_global(il, grid.row()), j = C.to_global(jl, grid.col());
                l.local(il, jl) = i >= j ? entry(i, j, n) : 0.0;
            }
        for (index_t jl = 0; jl < b0.n_loc(); ++jl)
            for (index_t il = 0; il < b0.m_loc(); ++il) b0.local(il, jl) = 1.0 + 0.001 * static_cast<double>(il % 17);

        auto time_potrs = [&] {
            kernels::copy(Op::N, b.m_loc(), b.n_loc(), b0.data(), b0.ld(), b.data(), b.ld());
            world.barrier();
            const double t0 = MPI_Wtime();
            if (what == "potrs") potrs(Uplo::Lower, l.view(), b.view(), {.lookahead = lookahead});
            else trsm(Uplo::Lower, what == "N" ? Op::N : Op::C, Diag::NonUnit, 1.0, l.view(), b.view(), {.lookahead = lookahead});
            const double t = MPI_Wtime() - t0;
            world.barrier();
            return t;
        };
        time_potrs();  // warm-up
        reset_traffic();
        std::vector<double> ts;
        for (int i = 0; i < runs; ++i) ts.push_back(time_potrs());
        const Traffic tr = traffic();
        double t = median(ts);
        MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, world.get());
        const TrsmOptions topts{.lookahead = lookahead};
        const Cost model = what == "potrs" ? potrs_cost(Uplo::Lower, l.layout(), b.layout(), topts, grid.row(), grid.col(), 8, false)
                                           : trsm_cost(Uplo::Lower, what == "N" ? Op::N : Op::C, l.layout(), b.layout(), topts,
                                                       grid.row(), grid.col(), 8, false);

        // Reference on rank 0: the whole L and B, the same two solves with the local BLAS.
        double t_ref = 0;
        const auto gl = gather(l.view());
        if (world.rank() == 0) {
            std::vector<double> gb(static_cast<std::size_t>(n * nrhs), 1.0), rb(gb.size());
            std::vector<double> rt;
            for (int i = 0; i <= runs; ++i) {
                std::copy(gb.begin(), gb.end(), rb.begin());
                const double t0 = MPI_Wtime();
                if (what != "C") kernels::trsm(true, true, Op::N, false, n, nrhs, 1.0, gl.data(), n, rb.data(), n);
                if (what != "N") kernels::trsm(true, true, Op::C, false, n, nrhs, 1.0, gl.data(), n, rb.data(), n);
                if (i > 0) rt.push_back(MPI_Wtime() - t0);
            }
            t_ref = median(rt);
        }
        world.barrier();
        if (world.rank() == 0) {
            const double flops = (what == "potrs" ? 2.0 : 1.0) * static_cast<double>(n) * n * nrhs;
            std::printf("{\"op\": \"%s\", \"lookahead\": %d, \"n\": %ld, \"nrhs\": %ld, \"nb\": %ld, \"grid\": \"%dx%d\", \"threads\": %d, "
                        "\"time_s\": %.6f, \"gflops\": %.2f, \"ref_time_s\": %.6f, \"ref_gflops\": %.2f, "
                        "\"speedup_vs_local_blas\": %.3f, \"words_rank0\": %ld, \"words_model\": %ld, "
                        "\"msgs_rank0\": %ld, \"msgs_model\": %ld}\n",
                        what.c_str(), lookahead, static_cast<long>(n), static_cast<long>(nrhs), static_cast<long>(nb), p, q, kernels::threads(), t,
                        flops / t * 1e-9, t_ref, flops / t_ref * 1e-9, t_ref / t, static_cast<long>(tr.words() / runs),
                        static_cast<long>(model.words), static_cast<long>(tr.msgs() / runs), static_cast<long>(model.msgs));
        }
    }
    MPI_Finalize();
    return 0;
}
