#pragma once
// cala errors: every failure cala reports is a cala::Error (or derived).

#include <stdexcept>
#include <string>

namespace cala {

/// Base of every exception cala throws. Argument errors are raised on every rank of the
/// communicator involved, before any communication that could hang, with inputs untouched.
class Error : public std::runtime_error {
public:
    explicit Error(const std::string& what) : std::runtime_error(what) {}
};

/// An MPI call returned an error code.
class MpiError : public Error {
public:
    MpiError(const char* file, int line, const char* call, int code);
    int code() const noexcept { return code_; }

private:
    int code_;
};

}  // namespace cala
