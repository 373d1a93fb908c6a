// cala::Gemm3D: a 2.5D/3D product whose operands stay in their layered layouts between calls.
// Gemm3D -> plan (model/planner, require_3d) -> Layered::bring_a/bring_b once -> multiply per call

#include "cala/model.hpp"
#include "core/check.hpp"
#include "gemm/driver.hpp"
#include "gemm/summa3d.hpp"
#include "matrix/redistribute_impl.hpp"
#include "model/planner.hpp"

namespace cala {

template <class T>
struct Gemm3D<T>::State {
    Op op_a, op_b;
    Grid2D grid;  // C's grid at construction
    BlockCyclic la, lb, lc;
    GemmPlanInfo info;
    detail::Plan3D plan;
    Grid3D g3;  // a copy: shares the communicators of the cached grid, valid however the cache changes
    detail::Layered<T> ops;
};

namespace {
// `seed`: a fingerprint of the call's scalars (multiply's alpha and beta), agreed with the layout.
template <class T>
void check_same_layout(const char* what, const MatrixRef<T>& x, const BlockCyclic& l, const Grid2D& grid,
                       std::uint64_t seed = 1469598103934665603ull) {
    std::string err = x.layout() == l ? std::string() : detail::cat("Gemm3D: ", what, " has another layout than at construction");
    if (err.empty() && !x.grid().same_as(grid)) err = detail::cat("Gemm3D: ", what, " lives on a different process grid");
    std::uint64_t fp = detail::fingerprint(seed, x.layout());
    grid.comm().agree(err, fp, "Gemm3D");
}
}  // namespace

template <class T>
Gemm3D<T>::Gemm3D(Op op_a, Op op_b, const MatrixRef<T>& a, const MatrixRef<T>& b, const MatrixRef<T>& c,
                  const GemmOptions& opts) {
    const std::string err = detail::check_gemm(op_a, op_b, a, b, c, opts);
    const std::uint64_t fp = err.empty() ? detail::gemm_fingerprint(op_a, op_b, T(1), a, b, T(0), c, opts) : 0;
    c.grid().comm().agree(err, fp, "Gemm3D");
    const index_t k = op_a == Op::N ? a.n() : a.m();
    const auto d = detail::decide_gemm(op_a, op_b, a.layout(), b.layout(), c.layout(), c.grid().order(), opts,
                                       sizeof(T), is_complex_v<T>, true);
    s_ = std::make_unique<State>(State{op_a, op_b, c.grid(), a.layout(), b.layout(), c.layout(), d.info,
                                       detail::plan_gemm_3d(op_a, op_b, c.m(), c.n(), k, d.variant, d.g, d.nb, opts),
                                       detail::grid3d_for(c.grid(), d.g), {}});
    s_->ops.bring_a(s_->plan, s_->g3, a);
    s_->ops.bring_b(s_->plan, s_->g3, b);
}

template <class T> Gemm3D<T>::~Gemm3D() = default;
template <class T> Gemm3D<T>::Gemm3D(Gemm3D&&) noexcept = default;
template <class T> Gemm3D<T>& Gemm3D<T>::operator=(Gemm3D&&) noexcept = default;

template <class T>
void Gemm3D<T>::set_a(const MatrixRef<T>& a) {
    check_same_layout("A", a, s_->la, s_->grid);
    s_->ops.bring_a(s_->plan, s_->g3, a);
}

template <class T>
void Gemm3D<T>::set_b(const MatrixRef<T>& b) {
    check_same_layout("B", b, s_->lb, s_->grid);
    s_->ops.bring_b(s_->plan, s_->g3, b);
}

template <class T>
void Gemm3D<T>::multiply(T alpha, T beta, const MatrixRef<T>& c) {
    // alpha and beta join the agreement: ranks passing different scalars would each scale
    // their own share of C (garbage, not a hang) without it.
    const std::uint64_t h = detail::fingerprint(detail::fingerprint(1469598103934665603ull, &alpha, sizeof alpha),
                                                &beta, sizeof beta);
    check_same_layout("C", c, s_->lc, s_->grid, h);
    s_->ops.multiply(s_->plan, s_->g3, alpha, beta, c, false);
}

template <class T>
const GemmPlanInfo& Gemm3D<T>::plan() const noexcept { return s_->info; }

#define CALA_INST(T) template class Gemm3D<T>;
CALA_FOR_EACH_TYPE(CALA_INST)

}  // namespace cala
