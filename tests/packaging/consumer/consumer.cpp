// An out-of-tree program built against the installed cala (tests/packaging): C := A·B on the
// squarest grid of the ranks it runs on, checked element by element against the closed form.
//   A(i, l) = (i + 1)·(l % 3 + 1),  B(l, j) = (j % 5 + 1)  =>  C(i, j) = (i + 1)·(j % 5 + 1)·S,
//   S = sum over l < k of (l % 3 + 1)
// Prints "cala consumer: ok ..." on rank 0 and exits 0 when every rank's C is right.

#include <mpi.h>

#include <cmath>
#include <cstdio>

#include "cala/cala.hpp"

int main(int argc, char** argv) {
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    int bad = 0, ranks = 0;
    {
        const cala::index_t m = 300, n = 200, k = 170, nb = 32;
        const cala::Grid2D grid(cala::Comm::borrow(MPI_COMM_WORLD));
        cala::DistMatrix<double> a(grid, m, k, nb, nb), b(grid, k, n, nb, nb),
            c(grid, m, n, nb, nb);
        const auto& la = a.layout();
        const auto& lb = b.layout();
        const auto& lc = c.layout();
        for (cala::index_t j = 0; j < a.n_loc(); ++j)
            for (cala::index_t i = 0; i < a.m_loc(); ++i)
                a.local(i, j) = double(la.rows.to_global(i, grid.row()) + 1) *
                                double(la.cols.to_global(j, grid.col()) % 3 + 1);
        for (cala::index_t j = 0; j < b.n_loc(); ++j)
            for (cala::index_t i = 0; i < b.m_loc(); ++i)
                b.local(i, j) = double(lb.cols.to_global(j, grid.col()) % 5 + 1);

        cala::gemm(cala::Op::N, cala::Op::N, 1.0, a.view(), b.view(), 0.0, c.view());

        double s = 0;
        for (cala::index_t l = 0; l < k; ++l) s += double(l % 3 + 1);
        for (cala::index_t j = 0; j < c.n_loc(); ++j)
            for (cala::index_t i = 0; i < c.m_loc(); ++i) {
                const double want = double(lc.rows.to_global(i, grid.row()) + 1) *
                                    double(lc.cols.to_global(j, grid.col()) % 5 + 1) * s;
                bad += std::abs(c.local(i, j) - want) > 1e-9 * want;
            }
        MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        ranks = grid.comm().size();
        if (grid.comm().rank() == 0)
            std::printf("cala consumer: %s on %d ranks (%dx%d), %d wrong elements\n",
                        bad ? "FAILED" : "ok", ranks, grid.p(), grid.q(), bad);
    }
    MPI_Finalize();
    return bad == 0 ? 0 : 1;
}
