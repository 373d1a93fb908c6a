#pragma once
// Return-code check for cuSOLVER (included by .cu files of cuda/ only, after cusolverDn.h).

#include <string>

#include "cala/error.hpp"

#define CALA_CHECK_CUSOLVER(call)                                                                      \
    do {                                                                                               \
        if (const cusolverStatus_t cala_st_ = (call); cala_st_ != CUSOLVER_STATUS_SUCCESS)             \
            throw ::cala::DeviceError(std::string(__FILE__) + ":" + std::to_string(__LINE__) + ": " + #call + \
                                ": cuSOLVER status " + std::to_string(static_cast<int>(cala_st_)));   \
    } while (false)
