// Symmetric layouts SBC (basic and extended) and TBC: the pattern, the greedy fill of the
// pattern's diagonal cells, the row sets, and the chooser. Pure arithmetic, no MPI.

#include <algorithm>
#include <cmath>

#include "cala/layout.hpp"
#include "core/check.hpp"

namespace cala {

const char* to_string(SymmetricKind k) noexcept {
    switch (k) {
        case SymmetricKind::SBC: return "sbc";
        case SymmetricKind::SBCExtended: return "sbc-extended";
        case SymmetricKind::TBC: return "tbc";
    }
    return "?";
}

SymmetricLayout::SymmetricLayout(SymmetricKind kind, int param, index_t n, index_t nb, int nprocs, int t,
                                 std::vector<int> cells)
    : kind_(kind), param_(param), n_(n), nb_(nb), nprocs_(nprocs), t_(t), cells_(std::move(cells)) {
    using detail::cat;
    if (n < 0) throw Error(cat(describe(), ": n is ", n, ", must be >= 0"));
    if (nb < 1) throw Error(cat(describe(), ": nb is ", nb, ", must be >= 1"));
    rows_.resize(static_cast<std::size_t>(t));
    for (int x = 0; x < t; ++x) {
        auto& row = rows_[static_cast<std::size_t>(x)];
        for (int y = 0; y < t; ++y)
            if (const int o = cell(x, y); o >= 0) row.push_back(o);
        std::sort(row.begin(), row.end());
        row.erase(std::unique(row.begin(), row.end()), row.end());
    }
    // Blocks of the pattern's own cells first, then the blocks on its diagonal cells, row by row,
    // each onto the least-loaded rank of its row set (ties: the lowest rank).
    const index_t nbk = num_blocks();
    blocks_.assign(static_cast<std::size_t>(nprocs), 0);
    elems_.assign(static_cast<std::size_t>(nprocs), 0);
    fill_start_.assign(static_cast<std::size_t>(nbk), 0);
    index_t nfill = 0;
    for (index_t i = 0; i < nbk; ++i) {
        fill_start_[static_cast<std::size_t>(i)] = nfill;
        nfill += i / t + 1;
        for (index_t j = 0; j <= i; ++j)
            if (const int o = cell(static_cast<int>(i % t), static_cast<int>(j % t)); o >= 0) {
                blocks_[static_cast<std::size_t>(o)] += 1;
                elems_[static_cast<std::size_t>(o)] += block_size(i) * block_size(j);
            }
    }
    fill_.assign(static_cast<std::size_t>(nfill), -1);
    for (index_t i = 0; i < nbk; ++i) {
        const int x = static_cast<int>(i % t);
        const int fixed = cell(x, x);
        for (index_t j = x, k = 0; j <= i; j += t, ++k) {
            int o = fixed;
            if (o < 0) {
                const auto& row = rows_[static_cast<std::size_t>(x)];
                o = row.front();
                for (const int r : row)
                    if (blocks_[static_cast<std::size_t>(r)] < blocks_[static_cast<std::size_t>(o)]) o = r;
            }
            fill_[static_cast<std::size_t>(fill_start_[static_cast<std::size_t>(i)] + k)] = o;
            if (fixed < 0) {
                blocks_[static_cast<std::size_t>(o)] += 1;
                elems_[static_cast<std::size_t>(o)] += block_size(i) * block_size(j);
            }
        }
    }
}

int SymmetricLayout::cell(int x, int y) const noexcept {
    return cells_[static_cast<std::size_t>(std::max(x, y)) * t_ + std::min(x, y)];
}

int SymmetricLayout::owner(index_t i, index_t j) const noexcept {
    if (i < j) std::swap(i, j);
    const int x = static_cast<int>(i % t_), y = static_cast<int>(j % t_);
    if (const int o = cell(x, y); o >= 0) return o;
    return fill_[static_cast<std::size_t>(fill_start_[static_cast<std::size_t>(i)] + j / t_)];
}

std::string SymmetricLayout::describe() const {
    return detail::cat(to_string(kind_), kind_ == SymmetricKind::TBC ? "(c=" : "(r=", param_, ") P=", nprocs_,
                       " T=", t_);
}

namespace {

bool is_prime(int c) {
    if (c < 2) return false;
    for (int d = 2; d * d <= c; ++d)
        if (c % d == 0) return false;
    return true;
}

// The r x r SBC pattern: off-diagonal lower cells numbered column by column, mirrored above;
// basic: ranks r(r−1)/2 + k on diagonal cells 2k and 2k+1; extended: diagonal cells left to fill.
std::vector<int> sbc_cells(int r, bool extended) {
    std::vector<int> cells(static_cast<std::size_t>(r) * r, -1);
    int next = 0;
    for (int y = 0; y < r; ++y)
        for (int x = y + 1; x < r; ++x) cells[static_cast<std::size_t>(x) * r + y] = next++;
    if (!extended)
        for (int x = 0; x < r; ++x) cells[static_cast<std::size_t>(x) * r + x] = next + x / 2;
    return cells;
}

// Algorithm 25: c triangular zones, then c² triangle-blocks with one row in each zone.
std::vector<int> tbc_cells(int c) {
    const int t = c * c;
    std::vector<int> cells(static_cast<std::size_t>(t) * t, -1);
    int next = 0;
    auto assign = [&](const std::vector<int>& rset) {
        for (const int x : rset)
            for (const int y : rset)
                if (x > y) cells[static_cast<std::size_t>(x) * t + y] = next;
        ++next;
    };
    for (int i = 0; i < c; ++i) {
        std::vector<int> rset;
        for (int u = 0; u < c; ++u) rset.push_back(i * c + u);
        assign(rset);
    }
    for (int i = 0; i < c; ++i)
        for (int j = 0; j < c; ++j) {
            std::vector<int> rset{j};
            for (int u = 1; u <= c - 1; ++u) rset.push_back(u * c + (i + (u - 1) * j) % c);
            assign(rset);
        }
    return cells;
}

}  // namespace

SymmetricBlockCyclic::SymmetricBlockCyclic(index_t n, index_t nb, int r, bool extended)
    : SymmetricLayout([&] {
          using detail::cat;
          if (extended ? r < 2 : (r < 2 || r % 2 != 0))
              throw Error(cat("SymmetricBlockCyclic: r is ", r, extended ? ", must be >= 2 (extended SBC)"
                                                                          : ", must be even and >= 2 (basic SBC)"));
          if (r > 4096) throw Error(cat("SymmetricBlockCyclic: r is ", r, ", must be <= 4096"));
          return SymmetricLayout(extended ? SymmetricKind::SBCExtended : SymmetricKind::SBC, r, n, nb,
                                 extended ? r * (r - 1) / 2 : r * r / 2, r, sbc_cells(r, extended));
      }()) {}

TriangleBlockCyclic::TriangleBlockCyclic(index_t n, index_t nb, int c)
    : SymmetricLayout([&] {
          if (!is_prime(c) || c > 61)
              throw Error(detail::cat("TriangleBlockCyclic: c is ", c, ", must be a prime <= 61"));
          return SymmetricLayout(SymmetricKind::TBC, c, n, nb, c * (c + 1), c * c, tbc_cells(c));
      }()) {}

SymmetricLayout make_symmetric_layout(const SymmetricChoice& c, index_t n, index_t nb) {
    if (c.kind == SymmetricKind::TBC) return TriangleBlockCyclic(n, nb, c.param);
    return SymmetricBlockCyclic(n, nb, c.param, c.kind == SymmetricKind::SBCExtended);
}

namespace {

// Every pattern on exactly `p` ranks.
std::vector<SymmetricChoice> patterns_on(int p) {
    std::vector<SymmetricChoice> out;
    for (int r = 2; r * r / 2 <= p; r += 2)
        if (r * r / 2 == p) out.push_back({SymmetricKind::SBC, r, p, 0, 2.0 * (r - 1)});
    for (int r = 2; r * (r - 1) / 2 <= p; ++r)
        if (r * (r - 1) / 2 == p) out.push_back({SymmetricKind::SBCExtended, r, p, 0, 2.0 * (r - 2)});
    for (int c = 2; c * (c + 1) <= p; ++c)
        if (is_prime(c) && c * (c + 1) == p) out.push_back({SymmetricKind::TBC, c, p, 0, 2.0 * c});
    return out;
}

std::string name_of(const SymmetricChoice& c) {
    return detail::cat(c.ranks, " (", to_string(c.kind), c.kind == SymmetricKind::TBC ? " c=" : " r=", c.param, ")");
}

}  // namespace

std::vector<SymmetricChoice> choose_symmetric_layout(int nranks, index_t n, index_t nb, std::int64_t max_words) {
    using detail::cat;
    if (nranks < 1) throw Error(cat("choose_symmetric_layout: nranks is ", nranks, ", must be >= 1"));
    if (n < 0 || nb < 1) throw Error(cat("choose_symmetric_layout: n is ", n, " and nb ", nb, ", need n >= 0, nb >= 1"));
    auto found = patterns_on(nranks);
    if (found.empty()) {
        std::string msg = cat("choose_symmetric_layout: ", nranks,
                              " ranks fit no symmetric pattern (SBC: P = r²/2, r even; extended SBC: "
                              "P = r(r-1)/2; TBC: P = c(c+1), c prime); nearby counts that fit:");
        int below = 0;
        for (int p = nranks - 1; p >= 1 && below == 0; --p)
            if (auto b = patterns_on(p); !b.empty()) {
                below = p;
                for (const auto& c : b) msg += " " + name_of(c);
            }
        for (int p = nranks + 1; p < 2 * nranks + 8; ++p)
            if (auto a = patterns_on(p); !a.empty()) {
                for (const auto& c : a) msg += " " + name_of(c);
                break;
            }
        if (below > 0) msg += cat("; on ", below, ", ", nranks - below, " of the ", nranks, " ranks stay idle");
        throw Error(msg);
    }
    std::vector<SymmetricChoice> fit;
    std::int64_t least = -1;
    for (auto& c : found) {
        const SymmetricLayout l = make_symmetric_layout(c, n, nb);
        for (int r = 0; r < l.nprocs(); ++r) c.words_per_rank = std::max(c.words_per_rank, l.local_elements(r));
        least = least < 0 ? c.words_per_rank : std::min(least, c.words_per_rank);
        if (max_words <= 0 || c.words_per_rank <= max_words) fit.push_back(c);
    }
    if (fit.empty())
        throw Error(cat("choose_symmetric_layout: an ", n, " x ", n, " matrix in ", nb, " blocks on ", nranks,
                        " ranks needs ", least, " words per rank, above the limit of ", max_words));
    std::stable_sort(fit.begin(), fit.end(), [](const auto& a, const auto& b) { return a.q_over_mn < b.q_over_mn; });
    return fit;
}

}  // namespace cala
