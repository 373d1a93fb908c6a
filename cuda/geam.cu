// cublas?geam with C = B (cuBLAS allows it when ldb == ldc and B is not transposed):
// c := 1·op(x) + beta·c. beta == 0: cuBLAS does not read c.

#include "geam.hpp"

#include "cuda_check.hpp"

namespace cala::cuda {

namespace {

template <class T>
cublasStatus_t call(cublasHandle_t h, cublasOperation_t ta, int m, int n, const T* one, const void* x, int ldx,
                    const void* beta, void* c, int ldc) {
    const T* xx = static_cast<const T*>(x);
    const T* bb = static_cast<const T*>(beta);
    T* cc = static_cast<T*>(c);
    if constexpr (std::is_same_v<T, float>) return cublasSgeam(h, ta, CUBLAS_OP_N, m, n, one, xx, ldx, bb, cc, ldc, cc, ldc);
    else if constexpr (std::is_same_v<T, double>) return cublasDgeam(h, ta, CUBLAS_OP_N, m, n, one, xx, ldx, bb, cc, ldc, cc, ldc);
    else if constexpr (std::is_same_v<T, cuComplex>) return cublasCgeam(h, ta, CUBLAS_OP_N, m, n, one, xx, ldx, bb, cc, ldc, cc, ldc);
    else return cublasZgeam(h, ta, CUBLAS_OP_N, m, n, one, xx, ldx, bb, cc, ldc, cc, ldc);
}

}  // namespace

void geam_in_place(cublasHandle_t h, device::Scalar s, Op op, int m, int n, const void* x, int ldx, const void* beta,
                   void* c, int ldc) {
    const bool real = s == device::Scalar::S || s == device::Scalar::D;
    const cublasOperation_t ta = op == Op::N ? CUBLAS_OP_N : op == Op::T || real ? CUBLAS_OP_T : CUBLAS_OP_C;
    const float fone = 1;
    const double done = 1;
    const cuComplex cone{1, 0};
    const cuDoubleComplex zone{1, 0};
    switch (s) {
    case device::Scalar::S: CALA_CHECK_CUBLAS(call<float>(h, ta, m, n, &fone, x, ldx, beta, c, ldc)); break;
    case device::Scalar::D: CALA_CHECK_CUBLAS(call<double>(h, ta, m, n, &done, x, ldx, beta, c, ldc)); break;
    case device::Scalar::C: CALA_CHECK_CUBLAS(call<cuComplex>(h, ta, m, n, &cone, x, ldx, beta, c, ldc)); break;
    case device::Scalar::Z: CALA_CHECK_CUBLAS(call<cuDoubleComplex>(h, ta, m, n, &zone, x, ldx, beta, c, ldc)); break;
    }
}

}  // namespace cala::cuda
