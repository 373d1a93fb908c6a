#pragma once
// cublas?geam for CudaDevice::add (cuda/geam.cu): c := op(x) + beta·c in place, issued on h's
// stream. Kept apart from cuda_device.cu, which orders the streams around it.

#include <cublas_v2.h>

#include "device/device.hpp"

namespace cala::cuda {

void geam_in_place(cublasHandle_t h, device::Scalar s, Op op, int m, int n, const void* x, int ldx, const void* beta,
                   void* c, int ldc);

}  // namespace cala::cuda
