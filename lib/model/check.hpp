#pragma once
// Argument checks shared by the entry points and the model's pure functions (plan_gemm,
// gemm_cost, redistribute_cost, plan_potrf, potrf_cost, trsm_cost, ...): a bad argument to a
// model function is a cala::Error naming it, not garbage or a read out of range.
//
// The *_error functions return "" or the message (prefixed with `fn`); check_* throw it.

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>

#include "cala/gemm.hpp"
#include "cala/layout.hpp"

namespace cala::detail {

/// op(A) m x k, op(B) k x n, C m x n (the messages of cala::gemm).
std::string gemm_shape_error(const char* fn, Op op_a, Op op_b, const BlockCyclic& a, const BlockCyclic& b,
                             const BlockCyclic& c);
/// lookahead, panel_width, block_size, grid3d (at most nranks), variant.
std::string gemm_options_error(const char* fn, const GemmOptions& o, int nranks);
/// Every layout on the p x q grid of the first.
std::string same_grid_error(const char* fn, const char* first, const BlockCyclic& l0,
                            std::initializer_list<std::pair<const char*, const BlockCyclic*>> others);

void throw_if(const std::string& error);
/// The gemm layouts and options of a model function.
void check_gemm_layouts(const char* fn, Op op_a, Op op_b, const BlockCyclic& a, const BlockCyclic& b,
                        const BlockCyclic& c, const GemmOptions& o);
/// op(src) has dst's shape, on the same grid.
void check_redistribute_layouts(const char* fn, Op op, const BlockCyclic& src, const BlockCyclic& dst);
/// (row, col) is a process of l's grid.
void check_process(const char* fn, const BlockCyclic& l, int row, int col);
/// rank is one of l's p·q ranks.
void check_rank(const char* fn, const BlockCyclic& l, int rank);
/// value >= min ("fn: name is value, must be >= min").
void check_at_least(const char* fn, const char* name, std::int64_t value, std::int64_t min);

}  // namespace cala::detail
