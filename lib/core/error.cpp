#include "cala/error.hpp"

#include <mpi.h>

#include <string>

namespace cala {

namespace {
std::string describe(const char* file, int line, const char* call, int code) {
    char text[MPI_MAX_ERROR_STRING] = {};
    int len = 0;
    if (MPI_Error_string(code, text, &len) != MPI_SUCCESS) len = 0;
    return std::string(call) + " failed at " + file + ":" + std::to_string(line) + ": " +
           std::string(text, static_cast<std::size_t>(len));
}
}  // namespace

MpiError::MpiError(const char* file, int line, const char* call, int code)
    : RankError(describe(file, line, call, code)), code_(code) {}

}  // namespace cala
