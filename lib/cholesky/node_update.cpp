// cala::potrf's trailing update through a device list (node_update.hpp).

#include "cholesky/node_update.hpp"

#include <algorithm>
#include <complex>
#include <limits>

#include "core/trace.hpp"
#include "kernels/blas.hpp"

namespace cala::detail {

namespace {

template <class T>
class Stair {
public:
    Stair(const StairUpdate<T>& s, const StairRect<T>& rect, const std::function<void()>& poll)
        : s_(s), rect_(rect), poll_(poll) {}

    // The tiles (i, j), j in columns [c0, c1), j <= i < rmax.
    void run(std::size_t c0, std::size_t c1, index_t rmax) {
        if (c1 - c0 == 1) return leaf(c0, rmax);
        const std::size_t mid = (c0 + c1) / 2;
        const std::size_t r0 = row_from(s_.col_g[mid]), r1 = row_from(rmax);
        if (r1 > r0) {
            const index_t x = s_.row_at[r0], y = s_.col_at[c0];
            rect_(s_.row_at[r1] - x, s_.col_at[mid] - y, s_.a + x, s_.b + y, s_.c + x + y * s_.ldc);
            poll_();
        }
        run(c0, mid, s_.col_g[mid]);
        run(mid, c1, rmax);
    }

private:
    // The first of my row tiles at or below global tile row g.
    std::size_t row_from(index_t g) const {
        return static_cast<std::size_t>(std::lower_bound(s_.row_g.begin(), s_.row_g.end(), g) - s_.row_g.begin());
    }

    // Column q, rows [col_g[q], rmax): herk on its diagonal tile if the row is mine, gemm below.
    void leaf(std::size_t q, index_t rmax) {
        const std::size_t r0 = row_from(s_.col_g[q]), r1 = row_from(rmax);
        if (r0 >= r1) return;
        const index_t y = s_.col_at[q], bj = s_.col_at[q + 1] - y, xe = s_.row_at[r1];
        index_t x = s_.row_at[r0];
        if (s_.row_g[r0] == s_.col_g[q]) {
            trace::Span sp(trace::Kind::Herk, "herk");
            kernels::herk(true, Op::N, bj, s_.k, real_t<T>(-1), s_.a + x, s_.lda, real_t<T>(1), s_.c + x + y * s_.ldc,
                          s_.ldc);
            x = s_.row_at[r0 + 1];
        }
        if (xe > x) {
            trace::Span sp(trace::Kind::Gemm, "gemm");
            kernels::gemm(Op::N, Op::C, xe - x, bj, s_.k, T(-1), s_.a + x, s_.lda, s_.b + y, s_.ldb, T(1),
                          s_.c + x + y * s_.ldc, s_.ldc);
        }
    }

    const StairUpdate<T>& s_;
    const StairRect<T>& rect_;
    const std::function<void()>& poll_;
};

}  // namespace

template <class T>
void stair_update(const StairUpdate<T>& s, const StairRect<T>& rect, const std::function<void()>& poll) {
    if (s.col_g.empty() || s.row_g.empty() || s.k == 0) return;
    Stair<T>(s, rect, poll).run(0, s.col_g.size(), std::numeric_limits<index_t>::max());
}

template <class T>
void stair_update(const StairUpdate<T>& s, const DeviceGemmOptions& dev, const std::function<void()>& poll) {
    const StairRect<T> rect = [&](index_t m, index_t n, const T* a, const T* b, T* c) {
        trace::Span sp(trace::Kind::Gemm, "node gemm");
        device_gemm(Op::N, Op::C, m, n, s.k, T(-1), a, s.lda, b, s.ldb, T(1), c, s.ldc, dev);
    };
    stair_update(s, rect, poll);
}

#define CALA_INST(T)                                                                                          \
    template void stair_update<T>(const StairUpdate<T>&, const DeviceGemmOptions&, const std::function<void()>&); \
    template void stair_update<T>(const StairUpdate<T>&, const StairRect<T>&, const std::function<void()>&);
CALA_FOR_EACH_TYPE(CALA_INST)
#undef CALA_INST

}  // namespace cala::detail
