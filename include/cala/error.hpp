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

/// A failure on this rank alone (an MPI or a device runtime call): the other ranks do not know
/// of it, so the caller cannot go on collectively; cala-bench and the ScaLAPACK shim abort.
class RankError : public Error {
public:
    explicit RankError(const std::string& what) : Error(what) {}
};

/// An MPI call returned an error code.
class MpiError : public RankError {
public:
    MpiError(const char* file, int line, const char* call, int code);
    int code() const noexcept { return code_; }

private:
    int code_;
};

/// A device runtime call (CUDA, cuBLAS, cuSOLVER, NCCL) failed on this rank.
class DeviceError : public RankError {
public:
    explicit DeviceError(const std::string& what) : RankError(what) {}
};

}  // namespace cala
