// A complete cala program: distribute A, B and C block-cyclically on a process grid, multiply,
// and check one entry. Build against an installed cala with
//   c++ -std=c++20 gemm_example.cpp $(pkg-config --cflags --libs cala) -o gemm_example
// and run with mpiexec.mpich -n 4 ./gemm_example.

#include <mpi.h>

#include <cstdio>

#include "cala/cala.hpp"

int main(int argc, char** argv) {
    const cala::Environment env(argc, argv);  // MPI_Init_thread(FUNNELED) ... MPI_Finalize
    int status = 0;
    try {
        // The squarest grid over all ranks; cala works on a duplicate of the communicator.
        const cala::Grid2D grid(cala::Comm::borrow(MPI_COMM_WORLD));
        const cala::index_t m = 1000, n = 800, k = 600, nb = 64;
        cala::DistMatrix<double> a(grid, m, k, nb, nb), b(grid, k, n, nb, nb), c(grid, m, n, nb, nb);

        // Fill the local parts: A(i, l) = 1, B(l, j) = j, through the global indices.
        for (cala::index_t jl = 0; jl < a.n_loc(); ++jl)
            for (cala::index_t il = 0; il < a.m_loc(); ++il) a.local(il, jl) = 1.0;
        const auto& lb = b.layout();
        for (cala::index_t jl = 0; jl < b.n_loc(); ++jl)
            for (cala::index_t il = 0; il < b.m_loc(); ++il)
                b.local(il, jl) = static_cast<double>(lb.cols.to_global(jl, grid.col()));

        cala::gemm(cala::Op::N, cala::Op::N, 1.0, a.view(), b.view(), 0.0, c.view());

        // C(i, j) = k·j; check C(0, n-1) on rank 0.
        const auto whole = cala::gather(c.view(), 0);
        if (grid.comm().rank() == 0) {
            const double got = whole[0 + (n - 1) * m], want = double(k) * double(n - 1);
            std::printf("C(0, %lld) = %.1f (expected %.1f) on a %d x %d grid, kernels %s\n",
                        static_cast<long long>(n - 1), got, want, grid.p(), grid.q(),
                        cala::blas_kernel_name().c_str());
            status = got == want ? 0 : 1;
        }
        MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
    } catch (const cala::Error& e) {
        std::fprintf(stderr, "cala error: %s\n", e.what());
        status = 1;
    }
    return status;
}
