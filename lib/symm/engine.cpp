// symm_engine: broadcast B's block rows over their row sets, local products on A's own tiles,
// partial C block rows summed at C's owner. See engine.hpp for the communication pattern.

#include "symm/engine.hpp"

#include <algorithm>
#include <deque>
#include <map>

#include "comm/finalize.hpp"
#include "core/check.hpp"
#include "core/workspace.hpp"
#include "kernels/blas.hpp"

namespace cala::detail {

namespace {

constexpr int kSymmReduceTag = 7310;

int index_in(const std::vector<int>& set, int rank) {
    const auto it = std::lower_bound(set.begin(), set.end(), rank);
    return it != set.end() && *it == rank ? static_cast<int>(it - set.begin()) : -1;
}

// One entry per communicator (recognized by a duplicate of it): the communicator of every row set
// made on it so far. Keyed by set, so the count stays bounded by the distinct sets (at most one
// per process row and column pair on a grid, T on a pattern), however many calls come.
struct SetCommEntry {
    Comm source;
    std::map<std::vector<int>, Comm> by_set;  // an empty Comm where this rank is not in the set
};
std::deque<SetCommEntry>& set_comm_cache() {
    static std::deque<SetCommEntry> cache;
    return cache;
}

// The full diagonal tile from its stored triangle (Hermitian: real diagonal).
template <class T>
void expand_diagonal(bool lower, bool herm, index_t nb, const T* a, index_t lda, T* d) {
    for (index_t j = 0; j < nb; ++j)
        for (index_t i = 0; i < nb; ++i) {
            const bool stored = lower ? i >= j : i <= j;
            T v = stored ? a[i + j * lda] : conj_if(a[j + i * lda], herm);
            if (i == j && herm) v = T(std::real(v));
            d[i + j * nb] = v;
        }
}

}  // namespace

std::vector<const Comm*> set_comms(const Comm& comm, const std::vector<std::vector<int>>& sets) {
    release_at_mpi_finalize<release_set_comms>();  // freed inside MPI_Finalize (LeakSanitizer)
    SetCommEntry* entry = nullptr;
    for (auto& e : set_comm_cache()) {
        int result = MPI_UNEQUAL;
        CALA_CHECK_MPI(MPI_Comm_compare(e.source.get(), comm.get(), &result));
        if (result == MPI_CONGRUENT || result == MPI_IDENT) entry = &e;
    }
    if (entry == nullptr) entry = &set_comm_cache().emplace_back(SetCommEntry{comm.dup(), {}});
    // Every rank has made the same calls, so every rank misses the same sets.
    std::vector<const Comm*> out;
    for (const auto& set : sets) {
        auto it = entry->by_set.find(set);
        if (it == entry->by_set.end()) {
            MPI_Group all = MPI_GROUP_NULL, grp = MPI_GROUP_NULL;
            CALA_CHECK_MPI(MPI_Comm_group(comm.get(), &all));
            CALA_CHECK_MPI(MPI_Group_incl(all, static_cast<int>(set.size()), set.data(), &grp));
            MPI_Comm c = MPI_COMM_NULL;
            CALA_CHECK_MPI(MPI_Comm_create(comm.get(), grp, &c));
            CALA_CHECK_MPI(MPI_Group_free(&grp));
            CALA_CHECK_MPI(MPI_Group_free(&all));
            it = entry->by_set.emplace(set, c == MPI_COMM_NULL ? Comm() : Comm::adopt(c)).first;
        }
        out.push_back(&it->second);
    }
    return out;
}

void release_set_comms() noexcept { set_comm_cache().clear(); }

template <class T>
Buffer<T> broadcast_rows(const Comm& comm, const SymmGeometry& g, Side side, Op top, const TileAt<T>& b,
                         std::vector<index_t>& pos, std::vector<std::vector<Request>>* pending) {
    const int me = comm.rank();
    const index_t n = g.ncut.n, nx = g.ncut.num_blocks();
    const auto comms = set_comms(comm, g.sets);
    pos.assign(static_cast<std::size_t>(g.nblk), -1);
    index_t total = 0;
    for (index_t l = 0; l < g.nblk; ++l)
        if (index_in(g.sets[static_cast<std::size_t>(g.set_of(l))], me) >= 0)
            pos[static_cast<std::size_t>(l)] = total, total += g.bsize(l) * n;
    Buffer<T> bb(total);
    std::vector<Request> reqs;
    if (pending != nullptr) pending->clear(), pending->resize(static_cast<std::size_t>(g.nblk));
    for (index_t l = 0; l < g.nblk; ++l) {
        const index_t at = pos[static_cast<std::size_t>(l)];
        if (at < 0) continue;
        const auto k = static_cast<std::size_t>(g.set_of(l));
        const index_t bs = g.bsize(l);
        for (index_t x = 0; x < nx; ++x) {
            const index_t w = g.ncut.block_size(x);
            T* dst = bb.data() + at + g.ncut.block_start(x) * bs;
            const int o = g.owner_bc(l, x);
            if (o == me) {
                const auto [bp, ldb] = b(l, x);
                if (side == Side::Left) kernels::copy(Op::N, bs, w, bp, ldb, dst, bs);
                else kernels::copy(top, w, bs, bp, ldb, dst, bs);
            }
            if (g.sets[k].size() > 1) {
                Request r = comms[k]->ibcast(dst, bs * w, index_in(g.sets[k], o));
                (pending != nullptr ? (*pending)[static_cast<std::size_t>(l)] : reqs).push_back(std::move(r));
            }
        }
    }
    wait_all(reqs);
    return bb;
}

Cost broadcast_rows_cost(const SymmGeometry& g, int rank) {
    Cost cost;
    for (index_t l = 0; l < g.nblk; ++l) {
        const auto& set = g.sets[static_cast<std::size_t>(g.set_of(l))];
        if (index_in(set, rank) < 0 || set.size() == 1) continue;
        for (index_t x = 0; x < g.ncut.num_blocks(); ++x) {
            const std::int64_t w = g.bsize(l) * g.ncut.block_size(x);
            cost.words += w, cost.msgs += 1, cost.words_recv += g.owner_bc(l, x) == rank ? 0 : w;
        }
    }
    return cost;
}

// Partial sums to C's owner: the owner posts one receive per other rank of the row set for each
// of its C tiles (ascending l, x, peer), into the returned buffer.
template <class T>
Buffer<T> post_receives(const Comm& comm, const SymmGeometry& g, const std::vector<index_t>& pos,
                        std::vector<Request>& reqs) {
    const int me = comm.rank();
    index_t total = 0;
    for (int pass = 0; pass < 2; ++pass) {
        Buffer<T> rb(pass == 0 ? 0 : total);
        index_t at = 0;
        for (index_t l = 0; l < g.nblk; ++l) {
            if (pos[static_cast<std::size_t>(l)] < 0) continue;
            const auto& set = g.sets[static_cast<std::size_t>(g.set_of(l))];
            for (index_t x = 0; x < g.ncut.num_blocks(); ++x) {
                if (g.owner_bc(l, x) != me) continue;
                const index_t cnt = g.bsize(l) * g.ncut.block_size(x);
                for (const int peer : set)
                    if (peer != me) {
                        if (pass == 1) reqs.push_back(comm.irecv(rb.data() + at, cnt, peer, kSymmReduceTag));
                        at += cnt;
                    }
            }
        }
        total = at;
        if (pass == 1) return rb;
    }
    return {};
}

// The other ranks of row l's set isend their W(l, x) to C's owner (ascending x).
template <class T>
void send_partials(const Comm& comm, const SymmGeometry& g, index_t l, const std::vector<index_t>& pos,
                   const Buffer<T>& ww, std::vector<Request>& reqs) {
    const index_t at = pos[static_cast<std::size_t>(l)];
    if (at < 0) return;
    const index_t bs = g.bsize(l);
    for (index_t x = 0; x < g.ncut.num_blocks(); ++x) {
        const int o = g.owner_bc(l, x);
        if (o != comm.rank())
            reqs.push_back(comm.isend(ww.data() + at + g.ncut.block_start(x) * bs, bs * g.ncut.block_size(x), o,
                                      kSymmReduceTag));
    }
}

template <class T>
void symm_engine(const Comm& comm, const SymmGeometry& g, Side side, bool herm, T alpha, const TileAt<T>& a,
                 const TileAt<T>& b, T beta, const TileAt<T>& c) {
    const int me = comm.rank();
    const index_t n = g.ncut.n, nx = g.ncut.num_blocks();
    const Op top = herm ? Op::C : Op::T;  // A(j, i) = top(A(i, j)); Right: B' = top(B)
    if (alpha == T(0)) {  // A and B not read
        for (index_t l = 0; l < g.nblk; ++l)
            for (index_t x = 0; x < nx; ++x)
                if (g.owner_bc(l, x) == me) {
                    const auto [cp, ldc] = c(l, x);
                    const index_t bs = g.bsize(l), w = g.ncut.block_size(x);
                    side == Side::Left ? kernels::scale(bs, w, beta, cp, ldc) : kernels::scale(w, bs, beta, cp, ldc);
                }
        return;
    }
    // Lookahead: the products start as soon as their two block rows of B' are in; W(l)'s sums
    // leave for C's owners once the last column of A that adds to them is done.
    std::vector<index_t> pos;
    std::vector<std::vector<Request>> pending;
    Buffer<T> bb = broadcast_rows(comm, g, side, top, b, pos, &pending);
    auto ready = [&pending](index_t l) { wait_all(pending[static_cast<std::size_t>(l)]); };
    Buffer<T> ww(bb.size());
    std::fill(ww.data(), ww.data() + ww.size(), T(0));
    std::vector<Request> reqs;
    Buffer<T> rb = post_receives<T>(comm, g, pos, reqs);
    std::vector<index_t> last(static_cast<std::size_t>(g.nblk), -1);  // last column adding to W(l) here
    for (index_t j = 0; j < g.nblk; ++j)
        for (index_t i = g.lower ? j : 0; i < (g.lower ? g.nblk : j + 1); ++i)
            if (g.owner_a(i, j) == me) last[static_cast<std::size_t>(i)] = last[static_cast<std::size_t>(j)] = j;
    index_t sent = 0;  // W(l) for l < sent have left (in ascending l: the receivers' order)
    auto send_done = [&](index_t upto) {
        for (; sent < g.nblk && last[static_cast<std::size_t>(sent)] <= upto; ++sent) send_partials(comm, g, sent, pos, ww, reqs);
    };

    // W(i) += A(i, j)·B'(j); W(j) += top(A(i, j))·B'(i) for every stored tile of mine.
    Buffer<T> diag;
    for (index_t j = 0; j < g.nblk; send_done(j), ++j)
        for (index_t i = g.lower ? j : 0; i < (g.lower ? g.nblk : j + 1); ++i) {
            if (g.owner_a(i, j) != me || n == 0) continue;
            ready(i), ready(j);
            const auto [ap, lda] = a(i, j);
            const index_t bi = g.bsize(i), bj = g.bsize(j);
            T* wi = ww.data() + pos[static_cast<std::size_t>(i)];
            T* wj = ww.data() + pos[static_cast<std::size_t>(j)];
            const T* bi_ = bb.data() + pos[static_cast<std::size_t>(i)];
            const T* bj_ = bb.data() + pos[static_cast<std::size_t>(j)];
            if (i == j) {
                if (diag.size() < bi * bi) diag = Buffer<T>(bi * bi);
                expand_diagonal(g.lower, herm, bi, ap, lda, diag.data());
                kernels::gemm(Op::N, Op::N, bi, n, bi, T(1), diag.data(), bi, bi_, bi, T(1), wi, bi);
            } else {
                kernels::gemm(Op::N, Op::N, bi, n, bj, T(1), ap, lda, bj_, bj, T(1), wi, bi);
                kernels::gemm(top, Op::N, bj, n, bi, T(1), ap, lda, bi_, bi, T(1), wj, bj);
            }
        }

    send_done(g.nblk);
    for (auto& r : pending) wait_all(r);
    struct Root { index_t l, x, recv_at; };
    std::vector<Root> roots;
    index_t rtotal = 0;
    for (index_t l = 0; l < g.nblk; ++l) {
        if (pos[static_cast<std::size_t>(l)] < 0) continue;
        const index_t s = static_cast<index_t>(g.sets[static_cast<std::size_t>(g.set_of(l))].size());
        for (index_t x = 0; x < nx; ++x)
            if (g.owner_bc(l, x) == me)
                roots.push_back({l, x, rtotal}), rtotal += (s - 1) * g.bsize(l) * g.ncut.block_size(x);
    }
    wait_all(reqs);
    const T scale = side == Side::Right && herm ? conj_if(alpha, true) : alpha;  // (conj(a)·S)ᴴ = a·Sᴴ
    for (const auto& r : roots) {
        const index_t bs = g.bsize(r.l), w = g.ncut.block_size(r.x), cnt = bs * w;
        const index_t s = static_cast<index_t>(g.sets[static_cast<std::size_t>(g.set_of(r.l))].size());
        T* sum = ww.data() + pos[static_cast<std::size_t>(r.l)] + g.ncut.block_start(r.x) * bs;
        for (index_t k = 0; k < s - 1; ++k) {
            const T* in = rb.data() + r.recv_at + k * cnt;
            for (index_t e = 0; e < cnt; ++e) sum[e] += in[e];
        }
        kernels::scale(bs, w, scale, sum, bs);
        const auto [cp, ldc] = c(r.l, r.x);
        if (side == Side::Left) kernels::add(Op::N, bs, w, sum, bs, beta, cp, ldc);
        else kernels::add(top, w, bs, sum, bs, beta, cp, ldc);
    }
}

Cost symm_engine_cost(const SymmGeometry& g, int rank, bool is_complex) {
    Cost cost = broadcast_rows_cost(g, rank);
    const index_t n = g.ncut.n, nx = g.ncut.num_blocks();
    for (index_t l = 0; l < g.nblk; ++l) {  // partial sums to C's owner
        const auto& set = g.sets[static_cast<std::size_t>(g.set_of(l))];
        const auto s = static_cast<std::int64_t>(set.size());
        if (index_in(set, rank) < 0 || s == 1) continue;
        for (index_t x = 0; x < nx; ++x) {
            const std::int64_t w = g.bsize(l) * g.ncut.block_size(x);
            if (g.owner_bc(l, x) == rank) cost.words += (s - 1) * w, cost.msgs += s - 1, cost.words_recv += (s - 1) * w;
            else cost.words += w, cost.msgs += 1;
        }
    }
    for (index_t j = 0; j < g.nblk; ++j)
        for (index_t i = g.lower ? j : 0; i < (g.lower ? g.nblk : j + 1); ++i)
            if (g.owner_a(i, j) == rank)
                cost.flops += (i == j ? 2.0 : 4.0) * double(g.bsize(i)) * double(g.bsize(j)) * double(n) *
                              (is_complex ? 4.0 : 1.0);
    return cost;
}

#define CALA_INST(T)                                                                                             \
    template void symm_engine<T>(const Comm&, const SymmGeometry&, Side, bool, T, const TileAt<T>&, const TileAt<T>&, \
                                 T, const TileAt<T>&);                                                          \
    template Buffer<T> broadcast_rows<T>(const Comm&, const SymmGeometry&, Side, Op, const TileAt<T>&,             \
                                         std::vector<index_t>&, std::vector<std::vector<Request>>*);
CALA_FOR_EACH_TYPE(CALA_INST)

}  // namespace cala::detail
