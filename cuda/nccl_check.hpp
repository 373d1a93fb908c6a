#pragma once
// The return-code check for NCCL (included by the .cu files of cuda/ that are built where nccl is found).

#include <nccl.h>

#include <string>

#include "cala/error.hpp"

#define CALA_CHECK_NCCL(call)                                                                          \
    do {                                                                                               \
        if (const ncclResult_t cala_nr_ = (call); cala_nr_ != ncclSuccess)                             \
            throw ::cala::DeviceError(std::string(__FILE__) + ":" + std::to_string(__LINE__) + ": " + #call + \
                                ": " + ncclGetErrorString(cala_nr_));                                  \
    } while (false)
