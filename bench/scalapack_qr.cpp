// ScaLAPACK's p?geqrf for cala-bench geqrf (scalapack_qr.hpp).

#include "scalapack_qr.hpp"

#include <omp.h>

#include <algorithm>
#include <complex>
#include <string>

#include "cala/error.hpp"
#include "kernels/blas.hpp"

extern "C" {
#define CALA_PGEQRF_PROTO(name, T)                                                                        \
    void name(const int* m, const int* n, T* a, const int* ia, const int* ja, const int* desca, T* tau, T* work, \
              const int* lwork, int* info);
CALA_PGEQRF_PROTO(psgeqrf_, float)
CALA_PGEQRF_PROTO(pdgeqrf_, double)
CALA_PGEQRF_PROTO(pcgeqrf_, std::complex<float>)
CALA_PGEQRF_PROTO(pzgeqrf_, std::complex<double>)
#undef CALA_PGEQRF_PROTO
}

namespace cala::bench {

template <class T>
void pgeqrf(const BlacsGrid& g, const MatrixRef<T>& a, std::vector<T>& tau) {
    const Grid2D& cg = a.grid();
    if (cg.order() != GridOrder::RowMajor || cg.p() != g.p() || cg.q() != g.q() || cg.row() != g.row() ||
        cg.col() != g.col())
        throw Error("scalapack: the cala grid of A does not match the BLACS grid");
    const auto da = descriptor(g, a.layout(), a.ld());
    const int m = static_cast<int>(a.m()), n = static_cast<int>(a.n()), one = 1;
    tau.assign(static_cast<std::size_t>(std::max<index_t>(1, a.n_loc())), T(0));
    int info = 0, lwork = -1;
    T q{};
    auto call = [&](T* work) {
        if constexpr (std::is_same_v<T, float>) psgeqrf_(&m, &n, a.data(), &one, &one, da.data(), tau.data(), work, &lwork, &info);
        else if constexpr (std::is_same_v<T, double>) pdgeqrf_(&m, &n, a.data(), &one, &one, da.data(), tau.data(), work, &lwork, &info);
        else if constexpr (std::is_same_v<T, std::complex<float>>) pcgeqrf_(&m, &n, a.data(), &one, &one, da.data(), tau.data(), work, &lwork, &info);
        else pzgeqrf_(&m, &n, a.data(), &one, &one, da.data(), tau.data(), work, &lwork, &info);
    };
    cala::kernels::set_threads(omp_get_max_threads());  // ScaLAPACK's BLAS, where libblas.so.3 is BLIS
    call(&q);
    lwork = std::max(1, static_cast<int>(std::real(q)));
    std::vector<T> work(static_cast<std::size_t>(lwork));
    call(work.data());
    if (info != 0) throw Error("scalapack: p?geqrf rejected argument " + std::to_string(-info));
}

#define CALA_INST(T) template void pgeqrf<T>(const BlacsGrid&, const MatrixRef<T>&, std::vector<T>&);
CALA_FOR_EACH_TYPE(CALA_INST)
#undef CALA_INST

}  // namespace cala::bench
