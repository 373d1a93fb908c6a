#pragma once
// Scalar types, operations and precision constants shared by every layer.

#include <complex>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace cala {

using index_t = std::int64_t;  ///< global indices and sizes: a 10^6 x 10^6 matrix must not overflow

/// op(X): no transpose, transpose, conjugate transpose (== transpose for real types).
enum class Op { N, T, C };
/// Which side an operand sits on: op(A)·B (Left) or B·op(A) (Right); for SYMM/HEMM, C := A·B
/// (Left) or C := B·A (Right) with A the symmetric matrix.
enum class Side { Left, Right };

template <class T> struct is_complex : std::false_type {};
template <class R> struct is_complex<std::complex<R>> : std::true_type {};
template <class T> inline constexpr bool is_complex_v = is_complex<T>::value;

template <class T> struct real_of { using type = T; };
template <class R> struct real_of<std::complex<R>> { using type = R; };
template <class T> using real_t = typename real_of<T>::type;

/// Unit roundoff of the real type underlying T.
template <class T> constexpr real_t<T> eps() { return std::numeric_limits<real_t<T>>::epsilon(); }

template <class T> constexpr T conj_if(T x, bool c) {
    if constexpr (is_complex_v<T>) return c ? std::conj(x) : x;
    else return x;
}

/// ⌈a / b⌉ for a >= 0, b > 0.
constexpr index_t ceil_div(index_t a, index_t b) { return (a + b - 1) / b; }

/// Single-character name of op as BLAS spells it.
constexpr char op_char(Op op) { return op == Op::N ? 'N' : op == Op::T ? 'T' : 'C'; }
constexpr bool is_trans(Op op) { return op != Op::N; }

}  // namespace cala

/// Instantiate a template for the four matrix types (one line at the end of each lib/ file).
#define CALA_FOR_EACH_TYPE(M) M(float) M(double) M(std::complex<float>) M(std::complex<double>)
