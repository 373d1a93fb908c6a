// p?gemm_ on a GPU node: the process's device, its measured rates, the route model and the
// resident run (resident_route.hpp).

#include "scalapack/resident_route.hpp"

#include <dlfcn.h>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>
#include <vector>

#include "cala/cholesky.hpp"
#include "cala/gemm.hpp"
#include "cala/model.hpp"
#include "comm/traffic.hpp"
#include "core/check.hpp"
#include "device/device.hpp"
#include "scalapack/report.hpp"

namespace cala::scalapack {

namespace {

using detail::cat;

enum class DeviceMode { Model, Always, Never };

DeviceMode device_mode() {
    static const DeviceMode m = [] {
        const char* e = std::getenv("CALA_SHIM_DEVICE");
        if (e == nullptr || *e == '\0' || std::strcmp(e, "model") == 0) return DeviceMode::Model;
        if (std::strcmp(e, "always") == 0) return DeviceMode::Always;
        if (std::strcmp(e, "never") == 0) return DeviceMode::Never;
        say(cat("ignoring CALA_SHIM_DEVICE=", e, " (not model, always or never)"));
        return DeviceMode::Model;
    }();
    return m;
}

// A positive number from the environment, or 0.
double env_rate(const char* name) {
    const char* e = std::getenv(name);
    if (e == nullptr || *e == '\0') return 0;
    char* end = nullptr;
    const double v = std::strtod(e, &end);
    if (end != e && v > 0) return v;
    say(cat("ignoring ", name, "=", e, " (not a number > 0)"));
    return 0;
}

// This process's entry of CALA_DEVICES: rank r of MPI_COMM_WORLD takes entry r mod count.
std::string my_entry(const std::string& list) {
    std::vector<std::string> items;
    std::size_t s = 0;
    for (std::size_t e; (e = list.find(',', s)) != std::string::npos; s = e + 1) items.push_back(list.substr(s, e - s));
    items.push_back(list.substr(s));
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    return items[static_cast<std::size_t>(rank) % items.size()];
}

// libcala_cuda registers the CUDA devices when it is loaded; a plain ScaLAPACK program that
// preloads the shim has not loaded it. Tried in order: CALA_CUDA_LIB, libcala_cuda.so beside the
// shim (installed), in the build tree (build/cuda/ from build/lib/scalapack/), then the search
// path. Returns what was tried when none loads.
std::string load_cuda_library() {
    std::vector<std::string> tries;
    if (const char* e = std::getenv("CALA_CUDA_LIB"); e != nullptr && *e != '\0') tries.emplace_back(e);
    Dl_info info{};
    if (dladdr(reinterpret_cast<void*>(&load_cuda_library), &info) != 0 && info.dli_fname != nullptr) {
        std::string dir = info.dli_fname;
        dir = dir.find('/') == std::string::npos ? "." : dir.substr(0, dir.rfind('/'));
        tries.push_back(dir + "/libcala_cuda.so");
        tries.push_back(dir + "/../../cuda/libcala_cuda.so");
    }
    tries.emplace_back("libcala_cuda.so");
    std::string said;
    for (const std::string& t : tries) {
        if (dlopen(t.c_str(), RTLD_NOW | RTLD_GLOBAL) != nullptr) return {};
        said += (said.empty() ? "" : ", ") + t;
    }
    return said;
}

// The process's device: opened on first use, kept for the life of the process. `error` says why
// there is none (CALA_DEVICES unset, or the open failed: said once on this rank).
struct ProcessDevice {
    ResidentDevice dev;
    std::string error;
};

const ProcessDevice& process_device() {
    static const ProcessDevice d = [] {
        ProcessDevice r;
        const char* list = std::getenv("CALA_DEVICES");
        if (list == nullptr || *list == '\0') {
            r.error = "CALA_DEVICES is not set";
            return r;
        }
        const std::string mine = my_entry(list);
        try {
            try {
                r.dev = ResidentDevice::open(mine);
            } catch (const Error&) {
                if (mine == "host") throw;
                const std::string tried = load_cuda_library();  // then once more
                try {
                    r.dev = ResidentDevice::open(mine);
                } catch (const Error& e) {
                    throw Error(tried.empty() ? std::string(e.what())
                                              : cat(e.what(), " (libcala_cuda not found: tried ", tried, ")"));
                }
            }
        } catch (const std::exception& e) {
            int rank = 0;
            MPI_Comm_rank(MPI_COMM_WORLD, &rank);
            r.error = cat("device '", mine, "' (CALA_DEVICES=", list, ", rank ", rank, ") cannot be opened: ", e.what());
            say(r.error + "; p?gemm_, p?potrf_, p?trsm_, p?syrk_, p?herk_: every call stays on the CPU path");
        }
        return r;
    }();
    return d;
}

// What the model needs of the device, per type: flop rate and host <-> device copy rate.
struct Rates {
    double flops_per_s = 0, bytes_per_s = 0;
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Measured once per process and type: square gemms on the device, 256 and doubling until one
// takes 20 ms (or 8192, or what the device has free), after one warm-up, the better of two at each
// size; the copy rate from the
// largest size's operand to and from the device (the path ResidentMatrix's copies take).
// CALA_SHIM_DEVICE_GFLOPS and CALA_SHIM_DEVICE_COPY_GBS replace the measurement.
template <class T>
Rates measure_rates(device::Device& d) {
    Rates r{env_rate("CALA_SHIM_DEVICE_GFLOPS") * 1e9, env_rate("CALA_SHIM_DEVICE_COPY_GBS") * 1e9};
    if (r.flops_per_s > 0 && r.bytes_per_s > 0) return r;
    const double fma = is_complex_v<T> ? 8.0 : 2.0;
    const T one(1), zero(0);
    double flops_rate = 0, copy_rate = 0;
    bool warm = false;
    for (index_t n = 256; n <= 8192; n *= 2) {
        const std::int64_t bytes = n * n * static_cast<std::int64_t>(sizeof(T));
        if (3 * bytes > d.budget_bytes() - d.used_bytes()) break;
        std::vector<T> host(static_cast<std::size_t>(n * n), T(0.5));
        void* a = d.allocate(bytes);
        void* b = d.allocate(bytes);
        void* c = d.allocate(bytes);
        auto t0 = std::chrono::steady_clock::now();
        d.copy_to_device({a, n, host.data(), n, n, n, sizeof(T)});
        d.synchronize();
        const double up = seconds_since(t0);
        d.copy_to_device({b, n, host.data(), n, n, n, sizeof(T)});
        if (!warm) d.gemm(device::scalar_of<T>(), Op::N, Op::N, n, n, n, &one, a, n, b, n, &zero, c, n), warm = true;
        d.synchronize();
        double t = 1e300;
        for (int rep = 0; rep < 2; ++rep) {  // the better of two
            t0 = std::chrono::steady_clock::now();
            d.gemm(device::scalar_of<T>(), Op::N, Op::N, n, n, n, &one, a, n, b, n, &zero, c, n);
            d.synchronize();
            t = std::min(t, seconds_since(t0));
        }
        t0 = std::chrono::steady_clock::now();
        d.copy_to_host({host.data(), n, c, n, n, n, sizeof(T)});
        d.synchronize();
        const double down = seconds_since(t0);
        d.release(a, bytes), d.release(b, bytes), d.release(c, bytes);
        flops_rate = fma * double(n) * double(n) * double(n) / std::max(t, 1e-9);
        copy_rate = 2.0 * double(bytes) / std::max(up + down, 1e-9);
        if (t >= 0.02) break;
    }
    if (r.flops_per_s <= 0) r.flops_per_s = flops_rate;
    if (r.bytes_per_s <= 0) r.bytes_per_s = copy_rate;
    return r;
}

template <class T>
const Rates& device_rates(device::Device& d) {
    static const Rates r = measure_rates<T>(d);
    return r;
}

std::string secs(double s) {
    char b[32];
    std::snprintf(b, sizeof b, "%.3g s", s);
    return b;
}

// This rank's prediction of the resident run (seconds; copies: their share), from the device's
// rates: what each routine's model adds to the shared decision below.
struct Prediction {
    double seconds = 0, copies = 0;
};

// The decision every routine's route shares: this rank's device (opened even with never: whether
// the CPU path, which reads CALA_DEVICES too, can use it), its prediction `device_model(rates)`
// (model mode only), the maximum over the grid with `same` (this rank's flag, true only where
// every rank's is), one allreduce of three numbers; then CALA_SHIM_DEVICE, or the prediction
// against `cpu_model()` (the planner's seconds of the CPU path; infinite when it throws).
template <class T, class DeviceModel, class CpuModel>
DeviceRoute decide(const Grid2D& grid, const char* rout, bool& same, const char* resident_note,
                   DeviceModel&& device_model, CpuModel&& cpu_model) {
    DeviceRoute out;
    out.where = "cpu";
    const DeviceMode mode = device_mode();
    if (std::getenv("CALA_DEVICES") == nullptr || *std::getenv("CALA_DEVICES") == '\0') {
        out.reason = "CALA_DEVICES is not set";
        same = false;
        return out;
    }
    out.asked = true;
    const ProcessDevice& pd = process_device();
    const double inf = std::numeric_limits<double>::infinity();
    // {no device here, device seconds, not the same here}, the maximum over the grid
    double mine[3] = {pd.dev.on_device() ? 0.0 : 1.0, inf, same ? 0.0 : 1.0};
    double copies = 0;
    std::string rates;
    if (pd.dev.on_device() && mode == DeviceMode::Model) {
        try {
            const Rates& rt = device_rates<T>(*pd.dev.get());
            char buf[96];
            std::snprintf(buf, sizeof buf, "; this rank's device %.4g GFLOP/s, copies %.4g GB/s", rt.flops_per_s / 1e9,
                          rt.bytes_per_s / 1e9);
            rates = buf;
            const Prediction pr = device_model(rt);
            mine[1] = pr.seconds;
            copies = pr.copies;
        } catch (const std::exception& e) {
            say(cat(rout, ": the device model failed: ", e.what()));
            mine[0] = 1.0;
        }
    } else if (pd.dev.on_device()) {
        mine[1] = 0;
    }
    if (grid.comm().size() > 1) {
        CALA_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, mine, 3, MPI_DOUBLE, MPI_MAX, grid.comm().get()));
        detail::count_control();
    }
    same = mine[2] == 0;
    out.usable = mine[0] == 0;
    if (!out.usable) {
        out.reason = pd.dev.on_device() ? "no device on another rank of the grid" : pd.error;
        return out;
    }
    if (mode == DeviceMode::Never) {
        out.reason = "CALA_SHIM_DEVICE=never";
        return out;
    }
    if (mode == DeviceMode::Always) {
        out.reason = "CALA_SHIM_DEVICE=always";
    } else {
        double cpu = inf;
        try {
            cpu = cpu_model();
        } catch (const Error&) {  // no host plan fits the memory limit: the device's
        }
        const std::string pred = cat("predicted device ", secs(mine[1]), " (copies ", secs(copies),
                                     " on this rank) vs cpu ", secs(cpu));
        if (!(mine[1] < cpu)) {
            out.reason = pred + ": the copies do not pay" + rates;
            return out;
        }
        out.reason = pred + rates;
    }
    out.resident = true;
    out.dev = pd.dev;
    out.where = cat("device ", pd.dev.name(), resident_note);
    return out;
}

// Seconds of a resident run's communication and flops on the device (rates `rt`): the cost at
// CALA_MODEL_*'s network with the device's flop rate, plus, on more than one process, the staged
// panels' words once more through host memory (device -> host at the root, back after).
double resident_seconds(const Cost& cost, const Rates& rt, const Grid2D& grid, std::size_t elem) {
    MachineModel mm = MachineModel::from_env();
    mm.seconds_per_flop = 1.0 / rt.flops_per_s;
    const double staged = grid.comm().size() > 1 ? double(cost.words) * double(elem) / rt.bytes_per_s : 0;
    return predicted_seconds(cost, mm, elem) + staged;
}

}  // namespace

template <class T>
DeviceRoute choose_route(const Grid2D& grid, Op op_a, Op op_b, const BlockCyclic& a, const BlockCyclic& b,
                         const BlockCyclic& c, bool beta_zero, bool same_ab) {
    const char* pipe = std::getenv("CALA_SHIM_DEVICE_PIPELINE");
    const bool pipelined = grid.p() == 1 && grid.q() == 1 && !(pipe != nullptr && std::strcmp(pipe, "0") == 0);
    const int row = grid.row(), col = grid.col();
    const auto loc = [&](const BlockCyclic& l) {
        return double(l.rows.local_size(row)) * double(l.cols.local_size(col)) * double(sizeof(T));
    };
    const auto device_model = [&](const Rates& rt) {
        // B once more unless it is A's array (the pipelined run copies B's slices anyway)
        const double b_bytes = same_ab && !pipelined ? 0.0 : loc(b);
        Prediction pr;
        pr.copies = (loc(a) + b_bytes + (beta_zero ? 1.0 : 2.0) * loc(c)) / rt.bytes_per_s;
        const Cost cost =
            resident_gemm_cost(op_a, op_b, a, b, c, ResidentGemmOptions{}, row, col, sizeof(T), is_complex_v<T>);
        const double product = resident_seconds(cost, rt, grid, sizeof(T));
        if (pipelined) {  // A first, then B's and C's slices under the products
            const double first = loc(a) / rt.bytes_per_s;
            pr.seconds = first + std::max(pr.copies - first, product);
        } else {
            pr.seconds = pr.copies + product;
        }
        return pr;
    };
    const auto cpu_model = [&] {
        return plan_gemm(op_a, op_b, a, b, c, grid.order(), GemmOptions{}, sizeof(T), is_complex_v<T>).predicted_time_s;
    };
    bool same = same_ab;
    DeviceRoute out = decide<T>(grid, "p?gemm_", same, pipelined ? " (resident, pipelined copies)" : " (resident)",
                                device_model, cpu_model);
    out.same_ab = same;
    out.pipelined = out.resident && pipelined;
    return out;
}

template <class T>
DeviceRoute choose_potrf_route(const Grid2D& grid, Uplo uplo, const BlockCyclic& a) {
    const int row = grid.row(), col = grid.col();
    const auto device_model = [&](const Rates& rt) {
        Prediction pr;  // the triangle's local part in, and the factor back
        pr.copies = 2.0 * double(detail::triangle_elements(uplo, a, row, col)) * double(sizeof(T)) / rt.bytes_per_s;
        const Cost cost = resident_potrf_cost(uplo, a, ResidentPotrfOptions{}, row, col, sizeof(T), is_complex_v<T>);
        pr.seconds = pr.copies + resident_seconds(cost, rt, grid, sizeof(T));
        return pr;
    };
    const auto cpu_model = [&] {
        return plan_potrf(uplo, a, grid.order(), CholeskyOptions{}, sizeof(T), is_complex_v<T>).predicted_time_s;
    };
    bool same = true;
    return decide<T>(grid, "p?potrf_", same, " (resident)", device_model, cpu_model);
}

template <class T>
DeviceRoute choose_trsm_route(const Grid2D& grid, Side side, Uplo uplo, Op op, const BlockCyclic& a,
                              const BlockCyclic& b) {
    const int row = grid.row(), col = grid.col();
    const auto loc = [&](const BlockCyclic& l) {
        return double(l.rows.local_size(row)) * double(l.cols.local_size(col)) * double(sizeof(T));
    };
    const auto device_model = [&](const Rates& rt) {
        Prediction pr;  // A and B up, B back
        pr.copies = (loc(a) + 2.0 * loc(b)) / rt.bytes_per_s;
        const Cost cost =
            resident_trsm_cost(side, uplo, op, a, b, ResidentPotrfOptions{}, row, col, sizeof(T), is_complex_v<T>);
        pr.seconds = pr.copies + resident_seconds(cost, rt, grid, sizeof(T));
        return pr;
    };
    const auto cpu_model = [&] {
        double s = std::numeric_limits<double>::infinity();
        try {  // nothing may escape before the allreduce
            const Cost cost = trsm_cost(side, uplo, op, a, b, TrsmOptions{}, row, col, sizeof(T), is_complex_v<T>);
            s = predicted_seconds(cost, MachineModel::from_env(), sizeof(T));
        } catch (const Error&) {
        }
        if (grid.comm().size() > 1) {  // the slowest rank's
            CALA_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, &s, 1, MPI_DOUBLE, MPI_MAX, grid.comm().get()));
            detail::count_control();
        }
        return s;
    };
    bool same = true;
    return decide<T>(grid, "p?trsm_", same, " (resident)", device_model, cpu_model);
}

template <class T>
DeviceRoute choose_herk_route(const Grid2D& grid, Uplo uplo, const BlockCyclic& a, const BlockCyclic& c,
                              bool beta_zero, double cpu_seconds, const BlockCyclic* moved_from, Op op_moved,
                              bool hermitian) {
    const int row = grid.row(), col = grid.col();
    const auto device_model = [&](const Rates& rt) {
        Prediction pr;  // A and C's triangle up (C's unless beta = 0), the triangle back
        const double tri = double(detail::triangle_elements(uplo, c, row, col)) * double(sizeof(T));
        const double loc_a = double(a.rows.local_size(row)) * double(a.cols.local_size(col)) * double(sizeof(T));
        pr.copies = (loc_a + (beta_zero ? 1.0 : 2.0) * tri) / rt.bytes_per_s;
        const Cost cost = (hermitian ? resident_herk_cost : resident_syrk_cost)(uplo, a, c, ResidentGemmOptions{}, row,
                                                                               col, sizeof(T), is_complex_v<T>);
        pr.seconds = pr.copies + resident_seconds(cost, rt, grid, sizeof(T));
        if (moved_from)  // op(sub(A)) transposed on the host first
            pr.seconds += predicted_seconds(redistribute_cost(op_moved, *moved_from, a, row, col),
                                            MachineModel::from_env(), sizeof(T));
        return pr;
    };
    bool same = true;
    return decide<T>(grid, "p?syrk_/p?herk_", same, " (resident)", device_model, [&] { return cpu_seconds; });
}

template <class T>
void run_resident_rank_k(const ResidentDevice& dev, Uplo uplo, bool hermitian, T alpha, const MatrixRef<T>& a, T beta,
                         const MatrixRef<T>& c) {
    const Grid2D& grid = c.grid();
    ResidentMatrix<T> ra(grid, a.layout(), dev), rc(grid, c.layout(), dev);  // collective: fails everywhere
    if (a.layout().rows.local_size(grid.row()) > 0 && a.layout().cols.local_size(grid.col()) > 0)
        ra.from_host(a.data(), a.ld());
    if (beta != T(0)) triangle_to_device(uplo, c, rc);  // beta = 0: C is not read
    if (hermitian) herk(uplo, std::real(alpha), ra, std::real(beta), rc, ResidentGemmOptions{});
    else syrk(uplo, alpha, ra, beta, rc, ResidentGemmOptions{});
    triangle_to_host(uplo, rc, c);
}

template <class T>
void run_resident_trsm(const ResidentDevice& dev, Side side, Uplo uplo, Op op, Diag diag, T alpha,
                       const MatrixRef<T>& a, const MatrixRef<T>& b) {
    const Grid2D& grid = b.grid();
    const auto local = [&](const MatrixRef<T>& x) {
        return x.layout().rows.local_size(grid.row()) > 0 && x.layout().cols.local_size(grid.col()) > 0;
    };
    ResidentMatrix<T> ra(grid, a.layout(), dev), rb(grid, b.layout(), dev);  // collective: fails everywhere
    if (local(a)) ra.from_host(a.data(), a.ld());
    if (local(b)) rb.from_host(b.data(), b.ld());
    trsm(side, uplo, op, diag, alpha, ra, rb, ResidentPotrfOptions{});
    if (local(b)) rb.to_host(b.data(), b.ld());
}

template <class T>
void run_resident(const ResidentDevice& dev, Op op_a, Op op_b, T alpha, const MatrixRef<T>& a,
                  const MatrixRef<T>& b, T beta, const MatrixRef<T>& c, bool same_ab) {
    const Grid2D& grid = c.grid();
    const auto local = [&](const MatrixRef<T>& x) {
        return x.layout().rows.local_size(grid.row()) > 0 && x.layout().cols.local_size(grid.col()) > 0;
    };
    ResidentMatrix<T> ra(grid, a.layout(), dev);
    if (local(a)) ra.from_host(a.data(), a.ld());
    std::optional<ResidentMatrix<T>> rb;
    if (!same_ab) {
        rb.emplace(grid, b.layout(), dev);
        if (local(b)) rb->from_host(b.data(), b.ld());
    }
    ResidentMatrix<T> rc(grid, c.layout(), dev);  // zeroed: with beta == 0 C is not read
    if (beta != T(0) && local(c)) rc.from_host(c.data(), c.ld());

    gemm(op_a, op_b, alpha, ra, same_ab ? ra : *rb, beta, rc, ResidentGemmOptions{});

    if (local(c)) rc.to_host(c.data(), c.ld());
}

#define CALA_INST(T)                                                                                             \
    template DeviceRoute choose_route<T>(const Grid2D&, Op, Op, const BlockCyclic&, const BlockCyclic&,           \
                                         const BlockCyclic&, bool, bool);                                         \
    template void run_resident<T>(const ResidentDevice&, Op, Op, T, const MatrixRef<T>&, const MatrixRef<T>&, T, \
                                  const MatrixRef<T>&, bool);                                                     \
    template DeviceRoute choose_potrf_route<T>(const Grid2D&, Uplo, const BlockCyclic&);                          \
    template DeviceRoute choose_trsm_route<T>(const Grid2D&, Side, Uplo, Op, const BlockCyclic&, const BlockCyclic&); \
    template void run_resident_trsm<T>(const ResidentDevice&, Side, Uplo, Op, Diag, T, const MatrixRef<T>&,       \
                                       const MatrixRef<T>&);                                                      \
    template DeviceRoute choose_herk_route<T>(const Grid2D&, Uplo, const BlockCyclic&, const BlockCyclic&, bool,  \
                                              double, const BlockCyclic*, Op, bool);                              \
    template void run_resident_rank_k<T>(const ResidentDevice&, Uplo, bool, T, const MatrixRef<T>&, T,           \
                                         const MatrixRef<T>&);
CALA_FOR_EACH_TYPE(CALA_INST)

}  // namespace cala::scalapack
