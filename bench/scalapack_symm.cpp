// PBLAS p?symm on cala's local storage (scalapack_symm.hpp).

#include "scalapack_symm.hpp"

#include <omp.h>

#include <complex>

#include "kernels/blas.hpp"

// PBLAS is written in C: character arguments carry no hidden lengths (as p?gemm_).
extern "C" {
#define CALA_PSYMM_PROTO(name, T)                                                                            \
    void name(const char* side, const char* uplo, const int* m, const int* n, const T* alpha, const T* a,     \
              const int* ia, const int* ja, const int* desca, const T* b, const int* ib, const int* jb,       \
              const int* descb, const T* beta, T* c, const int* ic, const int* jc, const int* descc);
CALA_PSYMM_PROTO(pssymm_, float)
CALA_PSYMM_PROTO(pdsymm_, double)
CALA_PSYMM_PROTO(pcsymm_, std::complex<float>)
CALA_PSYMM_PROTO(pzsymm_, std::complex<double>)
#undef CALA_PSYMM_PROTO
#define CALA_PSYRK_PROTO(name, T)                                                                            \
    void name(const char* uplo, const char* trans, const int* n, const int* k, const T* alpha, const T* a,    \
              const int* ia, const int* ja, const int* desca, const T* beta, T* c, const int* ic, const int* jc, \
              const int* descc);
CALA_PSYRK_PROTO(pssyrk_, float)
CALA_PSYRK_PROTO(pdsyrk_, double)
CALA_PSYRK_PROTO(pcsyrk_, std::complex<float>)
CALA_PSYRK_PROTO(pzsyrk_, std::complex<double>)
#undef CALA_PSYRK_PROTO
}

namespace cala::bench {

template <class T>
void psymm(const BlacsGrid& g, Side side, Uplo uplo, T alpha, const MatrixRef<T>& a, const MatrixRef<T>& b, T beta,
           const MatrixRef<T>& c) {
    if (c.grid().p() != g.p() || c.grid().q() != g.q() || c.grid().row() != g.row() || c.grid().col() != g.col())
        throw Error("scalapack: the cala grid of C does not match the BLACS grid");
    const auto da = descriptor(g, a.layout(), a.ld()), db = descriptor(g, b.layout(), b.ld()),
               dc = descriptor(g, c.layout(), c.ld());
    const int m = static_cast<int>(c.m()), n = static_cast<int>(c.n()), one = 1;
    const char s = side == Side::Left ? 'L' : 'R', u = uplo_char(uplo);
    cala::kernels::set_threads(omp_get_max_threads());  // ScaLAPACK's BLAS, where libblas.so.3 is BLIS (see pgemm)
    if constexpr (std::is_same_v<T, float>) pssymm_(&s, &u, &m, &n, &alpha, a.data(), &one, &one, da.data(), b.data(), &one, &one, db.data(), &beta, c.data(), &one, &one, dc.data());
    else if constexpr (std::is_same_v<T, double>) pdsymm_(&s, &u, &m, &n, &alpha, a.data(), &one, &one, da.data(), b.data(), &one, &one, db.data(), &beta, c.data(), &one, &one, dc.data());
    else if constexpr (std::is_same_v<T, std::complex<float>>) pcsymm_(&s, &u, &m, &n, &alpha, a.data(), &one, &one, da.data(), b.data(), &one, &one, db.data(), &beta, c.data(), &one, &one, dc.data());
    else pzsymm_(&s, &u, &m, &n, &alpha, a.data(), &one, &one, da.data(), b.data(), &one, &one, db.data(), &beta, c.data(), &one, &one, dc.data());
}

template <class T>
void psyrk(const BlacsGrid& g, Uplo uplo, T alpha, const MatrixRef<T>& a, T beta, const MatrixRef<T>& c) {
    if (c.grid().p() != g.p() || c.grid().q() != g.q() || c.grid().row() != g.row() || c.grid().col() != g.col())
        throw Error("scalapack: the cala grid of C does not match the BLACS grid");
    const auto da = descriptor(g, a.layout(), a.ld()), dc = descriptor(g, c.layout(), c.ld());
    const int n = static_cast<int>(c.n()), k = static_cast<int>(a.n()), one = 1;
    const char u = uplo_char(uplo), t = 'N';
    cala::kernels::set_threads(omp_get_max_threads());
    if constexpr (std::is_same_v<T, float>) pssyrk_(&u, &t, &n, &k, &alpha, a.data(), &one, &one, da.data(), &beta, c.data(), &one, &one, dc.data());
    else if constexpr (std::is_same_v<T, double>) pdsyrk_(&u, &t, &n, &k, &alpha, a.data(), &one, &one, da.data(), &beta, c.data(), &one, &one, dc.data());
    else if constexpr (std::is_same_v<T, std::complex<float>>) pcsyrk_(&u, &t, &n, &k, &alpha, a.data(), &one, &one, da.data(), &beta, c.data(), &one, &one, dc.data());
    else pzsyrk_(&u, &t, &n, &k, &alpha, a.data(), &one, &one, da.data(), &beta, c.data(), &one, &one, dc.data());
}

#define CALA_INST(T)                                                                                        \
    template void psyrk<T>(const BlacsGrid&, Uplo, T, const MatrixRef<T>&, T, const MatrixRef<T>&);        \
    template void psymm<T>(const BlacsGrid&, Side, Uplo, T, const MatrixRef<T>&, const MatrixRef<T>&, T,    \
                           const MatrixRef<T>&);
CALA_FOR_EACH_TYPE(CALA_INST)
#undef CALA_INST

}  // namespace cala::bench
