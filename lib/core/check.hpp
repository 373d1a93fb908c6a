#pragma once
// Internal check macros.

#include <mpi.h>

#include <sstream>
#include <string>

#include "cala/error.hpp"

#define CALA_CHECK_MPI(call)                                                      \
    do {                                                                          \
        if (const int cala_err_ = (call); cala_err_ != MPI_SUCCESS)               \
            throw ::cala::MpiError(__FILE__, __LINE__, #call, cala_err_);         \
    } while (false)

namespace cala::detail {

/// Concatenates its arguments with operator<< (for error messages that print values).
template <class... Args>
std::string cat(const Args&... args) {
    std::ostringstream os;
    (os << ... << args);
    return os.str();
}

}  // namespace cala::detail
