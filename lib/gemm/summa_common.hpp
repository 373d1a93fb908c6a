#pragma once
// Shared machinery of the three SUMMA variants: the plan's operands as views, and a local GEMM
// that keeps MPI progressing on the pending panels while it runs.

#include <algorithm>
#include <deque>
#include <vector>

#include "cala/comm.hpp"
#include "cala/device.hpp"
#include "cala/matrix.hpp"
#include "gemm/plan.hpp"
#include "kernels/blas.hpp"

namespace cala::detail {

/// The requests of the panels in flight, polled between chunks of the local GEMM (MPI only
/// progresses inside MPI calls, and the rank's cores are all busy in the GEMM).
struct InFlight {
    const DeviceGemmOptions* devices = nullptr;  ///< local updates on devices (chunked engine)
    std::deque<std::vector<Request>> steps;  ///< panel broadcasts, one entry per group
    std::deque<std::vector<Request>> reds;   ///< partial-C reductions, one entry per group
    void poll() {
        for (auto* q : {&steps, &reds})
            for (auto& s : *q) test_all(s);
    }
    bool empty() const {
        for (const auto* q : {&steps, &reds})
            for (const auto& s : *q)
                for (const auto& r : s)
                    if (!r.done()) return false;
        return true;
    }
};

/// c := alpha·op(a)·op(b) + beta·c, split along k into pieces with MPI progress in between (beta
/// on the first piece only). Along k, a piece packs only its own part of op(a) and op(b), and
/// pieces of 256 (BLIS's k_c) pass over C as often as one call does: cutting along m or n
/// instead packed the other operand once per piece (4 times per group at n = 2048 on 1 x 2).
template <class T>
void gemm_with_progress(InFlight& fl, Op op_a, Op op_b, index_t m, index_t n, index_t k, T alpha, const T* a,
                        index_t lda, const T* b, index_t ldb, T beta, T* c, index_t ldc) {
    if (fl.devices != nullptr) {  // one chunked out-of-core call per local update
        fl.poll();
        device_gemm(op_a, op_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, *fl.devices);
        fl.poll();
        return;
    }
    const index_t chunks = progress_chunks(k, !fl.empty());
    const index_t w = k == 0 ? 1 : (k + chunks - 1) / chunks;
    for (index_t x = 0; x < std::max<index_t>(k, 1); x += w) {
        const index_t kx = std::min(w, k - x);
        const T* ax = op_a == Op::N ? a + x * lda : a + x;
        const T* bx = op_b == Op::N ? b + x : b + x * ldb;
        kernels::gemm(op_a, op_b, m, n, kx, alpha, ax, lda, bx, ldb, x == 0 ? beta : T(1), c, ldc);
        fl.poll();
    }
}

template <class T>
void summa_c(const GemmPlan& plan, T alpha, const MatrixRef<T>& a, const MatrixRef<T>& b, T beta,
             const MatrixRef<T>& c);
template <class T>
void summa_a(const GemmPlan& plan, T alpha, const MatrixRef<T>& a, const MatrixRef<T>& bt, T beta,
             const MatrixRef<T>& c);
template <class T>
void summa_b(const GemmPlan& plan, T alpha, const MatrixRef<T>& at, const MatrixRef<T>& b, T beta,
             const MatrixRef<T>& c);

}  // namespace cala::detail
