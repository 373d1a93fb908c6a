#pragma once
// Return-code checks for the CUDA runtime and cuBLAS (included by .cu files of cuda/ only; NCCL's in
// nccl_check.hpp).

#include <string>

#include "cala/error.hpp"

#define CALA_CHECK_CUDA(call)                                                                          \
    do {                                                                                               \
        if (const cudaError_t cala_err_ = (call); cala_err_ != cudaSuccess)                            \
            throw ::cala::DeviceError(std::string(__FILE__) + ":" + std::to_string(__LINE__) + ": " + #call + \
                                ": " + cudaGetErrorString(cala_err_));                                 \
    } while (false)
#define CALA_CHECK_CUBLAS(call)                                                                        \
    do {                                                                                               \
        if (const cublasStatus_t cala_st_ = (call); cala_st_ != CUBLAS_STATUS_SUCCESS)                 \
            throw ::cala::DeviceError(std::string(__FILE__) + ":" + std::to_string(__LINE__) + ": " + #call + \
                                ": cuBLAS status " + std::to_string(static_cast<int>(cala_st_)));     \
    } while (false)
