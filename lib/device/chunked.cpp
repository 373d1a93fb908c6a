// The chunked engine (seed Algorithm 3 with lookahead, p = q = 1): blocks of b x c tiles of C,
// the k loop in chunks of d tiles, C columns dealt cyclically to the devices, a barrier per chunk.
// With plan.split = 2 the k loop runs over half-depth slabs (A t x t/2, B t/2 x t): the same
// products, in two half-depth gemms per tile, with half the input memory per chunk.
// The inputs of chunks s+1 .. s+l are loaded right after chunk s's products are issued (prefetch);
// a tile another device already holds is copied device-to-device. With plan.stream_c, C's copies
// run under the products too (chunked.hpp).

#include <algorithm>
#include <array>
#include <complex>
#include <map>

#include "device/chunked.hpp"

namespace cala::device {

namespace {

using Key = std::array<index_t, 4>;  // {0: A | 1: B | 2: C, row tile, column tile, epoch}

struct Held {
    std::map<Key, void*> tiles;
};

template <class T>
class Engine {
public:
    Engine(std::span<Device* const> devs, const ChunkedPlan& p, std::vector<DeviceTraffic>& tr)
        : devs_(devs), p_(p), held_(devs.size()), tr_(tr), bytes_(static_cast<std::int64_t>(sizeof(T)) * p.tile * p.tile),
          slab_bytes_(bytes_ / p.split) {}
    ~Engine() {
        for (std::size_t g = 0; g < devs_.size(); ++g) {
            try { devs_[g]->synchronize(); } catch (...) {}
            for (auto& [key, ptr] : held_[g].tiles) devs_[g]->release(ptr, bytes_of(key));
        }
    }
    /// A C tile is a whole tile; an A or B block is a slab (a tile when split 1).
    std::int64_t bytes_of(const Key& key) const { return key[0] == 2 ? bytes_ : slab_bytes_; }

    void* get(std::size_t g, const Key& key) const {
        auto it = held_[g].tiles.find(key);
        return it == held_[g].tiles.end() ? nullptr : it->second;
    }
    void* put(std::size_t g, const Key& key) {
        void* ptr = devs_[g]->allocate(bytes_of(key));
        held_[g].tiles.emplace(key, ptr);
        return ptr;
    }
    /// A/B tile from the host: the device may find it resident (counted as reused, not h2d).
    void* load(std::size_t g, const Key& key, const Copy2D& src) {
        bool moved = true;
        void* ptr = devs_[g]->load(src, bytes_of(key), &moved);
        held_[g].tiles.emplace(key, ptr);
        ++(moved ? tr_[g].h2d : tr_[g].reused);
        return ptr;
    }
    void drop(std::size_t g, const Key& key) {
        auto it = held_[g].tiles.find(key);
        devs_[g]->release(it->second, bytes_of(key));
        held_[g].tiles.erase(it);
    }
    /// Drops every tile of kind with the given epoch on every device.
    void drop_epoch(index_t kind, index_t epoch) {
        for (std::size_t g = 0; g < devs_.size(); ++g)
            for (auto it = held_[g].tiles.begin(); it != held_[g].tiles.end();) {
                if (it->first[0] == kind && it->first[3] == epoch) {
                    devs_[g]->release(it->second, bytes_of(it->first));
                    it = held_[g].tiles.erase(it);
                } else {
                    ++it;
                }
            }
    }

    std::span<Device* const> devs_;
    ChunkedPlan p_;
    std::vector<Held> held_;
    std::vector<DeviceTraffic>& tr_;
    std::int64_t bytes_, slab_bytes_;
};

/// begin_host_ranges on every device now, end_host_ranges on scope exit.
class HostRanges {
public:
    HostRanges(std::span<Device* const> devs, const std::vector<std::pair<const void*, std::int64_t>>& r)
        : devs_(devs) {
        try {
            for (auto* d : devs_) {
                d->begin_host_ranges(r);
                ++begun_;
            }
        } catch (...) {
            for (std::size_t g = 0; g < begun_; ++g) devs_[g]->end_host_ranges();
            throw;
        }
    }
    ~HostRanges() {
        for (std::size_t g = 0; g < begun_; ++g) devs_[g]->end_host_ranges();
    }
    HostRanges(const HostRanges&) = delete;
    HostRanges& operator=(const HostRanges&) = delete;

private:
    std::span<Device* const> devs_;
    std::size_t begun_ = 0;
};

struct Chunk {
    index_t x, y, z;
};

}  // namespace

template <class T>
void chunked_gemm(std::span<Device* const> devs, const ChunkedPlan& p, Op op_a, Op op_b, index_t m, index_t n,
                  index_t k, T alpha, const T* a, index_t lda, const T* b, index_t ldb, T beta, T* c, index_t ldc,
                  std::vector<DeviceTraffic>& traffic, ResidentC* rc) {
    const index_t t = p.tile;
    if (rc && (rc->tile != t || rc->tiles.size() != devs.size() || p.stream_c))
        throw Error("chunked_gemm: resident C of another tile size or device count, or a streamed-C plan");
    if (p.split < 1 || t % p.split != 0) throw Error("chunked_gemm: the slab split must divide the tile");
    const index_t ks = t / p.split;  // slab depth in k (t when split 1)
    const int G = static_cast<int>(devs.size());
    const index_t mt = ceil_div(m, t), nt = ceil_div(n, t), kt = ceil_div(k, ks);
    const index_t xb = ceil_div(mt, p.b), yb = ceil_div(nt, p.c), zb = ceil_div(kt, p.d);
    traffic.assign(devs.size(), DeviceTraffic{});
    // The operands, for devices that pin host memory for asynchronous copies (ended after the
    // engine has synchronized: e is destroyed first).
    auto extent = [&](index_t ld, index_t rows_, index_t cols_) {
        return rows_ == 0 || cols_ == 0 ? std::int64_t{0}
                                        : static_cast<std::int64_t>(sizeof(T)) * (ld * (cols_ - 1) + rows_);
    };
    const std::vector<std::pair<const void*, std::int64_t>> ranges{
        {a, op_a == Op::N ? extent(lda, m, k) : extent(lda, k, m)},
        {b, op_b == Op::N ? extent(ldb, k, n) : extent(ldb, n, k)},
        {c, extent(ldc, m, n)}};
    HostRanges pinned(devs, ranges);
    Engine<T> e(devs, p, traffic);
    const std::size_t es = sizeof(T);
    auto rows = [&](index_t i, index_t extent) { return std::min(t, extent - i * t); };
    auto depth = [&](index_t l) { return std::min(ks, k - l * ks); };
    // Device leading dimensions: a block's stored rows are t (m or n) or ks (k).
    const index_t lda_d = op_a == Op::N ? t : ks, ldb_d = op_b == Op::N ? ks : t;

    std::vector<Chunk> chunks;
    for (index_t y = 0; y < yb; ++y)
        for (index_t x = 0; x < xb; ++x)
            for (index_t z = 0; z < zb; ++z) chunks.push_back({x, y, z});
    const auto n_chunks = static_cast<index_t>(chunks.size());

    auto epoch_a = [&](index_t s) { return p.regime == 'a' ? index_t{0} : s; };
    auto epoch_b = [&](index_t s) { return p.regime == 'a' ? index_t{0} : p.regime == 'b' ? chunks[s].y : s; };
    // Host location and stored shape of block (i, l) of op(A) and (l, j) of op(B), l a k slab.
    auto a_copy = [&](index_t i, index_t l, void* dst) {
        const index_t mb = rows(i, m), kb = depth(l);
        return op_a == Op::N ? Copy2D{dst, lda_d, a + i * t + l * ks * lda, lda, mb, kb, es}
                             : Copy2D{dst, lda_d, a + l * ks + i * t * lda, lda, kb, mb, es};
    };
    auto b_copy = [&](index_t l, index_t j, void* dst) {
        const index_t kb = depth(l), nb = rows(j, n);
        return op_b == Op::N ? Copy2D{dst, ldb_d, b + l * ks + j * t * ldb, ldb, kb, nb, es}
                             : Copy2D{dst, ldb_d, b + j * t + l * ks * ldb, ldb, nb, kb, es};
    };
    // C tile (i, j) on device g: allocated, and read from the host unless beta == 0 (with rc: once).
    auto c_tile = [&](std::size_t g, index_t i, index_t j) -> void* {
        if (!rc) return e.get(g, Key{2, i, j, 0});
        auto it = rc->tiles[g].find({i, j});
        return it == rc->tiles[g].end() ? nullptr : it->second;
    };
    auto c_in = [&](std::size_t g, index_t i, index_t j) {
        if (c_tile(g, i, j)) return;
        void* ct = nullptr;
        if (rc) {
            ct = devs[g]->allocate(e.bytes_);
            rc->tiles[g].emplace(std::pair{i, j}, ct);
        } else {
            ct = e.put(g, Key{2, i, j, 0});
        }
        if (beta != T{0}) {
            devs[g]->copy_to_device(Copy2D{ct, t, c + i * t + j * t * ldc, ldc, rows(i, m), rows(j, n), es});
            ++traffic[g].h2d;
        }
    };
    auto c_out = [&](std::size_t g, index_t i, index_t j) {
        const Key ck{2, i, j, 0};
        devs[g]->copy_to_host(Copy2D{c + i * t + j * t * ldc, ldc, e.get(g, ck), t, rows(i, m), rows(j, n), es});
        ++traffic[g].d2h;
    };
    auto participates = [&](index_t y, int g) {
        const index_t j0 = y * p.c, j1 = std::min(j0 + p.c, nt);
        for (index_t j = j0; j < j1; ++j)
            if (j % G == g) return true;
        return false;
    };

    auto load = [&](index_t s) {
        const Chunk ch = chunks[s];
        const index_t i0 = ch.x * p.b, i1 = std::min(i0 + p.b, mt);
        const index_t l0 = ch.z * p.d, l1 = std::min(l0 + p.d, kt);
        const index_t j0 = ch.y * p.c, j1 = std::min(j0 + p.c, nt);
        // Phase 1, host -> device: A tiles no device holds go to the lowest participating device;
        // each device's own B tiles.
        bool any_peer = false;
        for (index_t i = i0; i < i1; ++i)
            for (index_t l = l0; l < l1; ++l) {
                const Key key{0, i, l, epoch_a(s)};
                bool held = false;
                for (int g = 0; g < G && !held; ++g) held = e.get(g, key) != nullptr;
                for (int g = 0; g < G; ++g) {
                    if (!participates(ch.y, g) || e.get(g, key)) continue;
                    if (!held) {
                        e.load(g, key, a_copy(i, l, nullptr));
                        held = true;
                    } else {
                        any_peer = true;
                    }
                }
            }
        for (index_t j = j0; j < j1; ++j)
            for (index_t l = l0; l < l1; ++l) {
                const auto g = static_cast<std::size_t>(j % G);
                const Key key{1, l, j, epoch_b(s)};
                if (e.get(g, key)) continue;
                e.load(g, key, b_copy(l, j, nullptr));
            }
        if (!any_peer) return;
        // Phase 2, device -> device: the other participating devices copy A from a holder (each
        // copy is ordered after the holder's load of the tile by the device itself).
        for (index_t i = i0; i < i1; ++i)
            for (index_t l = l0; l < l1; ++l) {
                const Key key{0, i, l, epoch_a(s)};
                int src = -1;
                for (int g = 0; g < G && src < 0; ++g)
                    if (e.get(g, key)) src = g;
                for (int g = 0; g < G; ++g) {
                    if (!participates(ch.y, g) || e.get(g, key)) continue;
                    Copy2D cp = a_copy(i, l, e.put(g, key));
                    cp.src = e.get(src, key), cp.ld_src = lda_d;
                    devs[g]->copy_from_peer(cp, *devs[src]);
                    ++traffic[g].d2d;
                }
            }
    };

    const T one{1};
    const int la = p.lookahead;
    // Inputs are loaded la chunks ahead. A chunk's products are issued before the next inputs are
    // packed: a device whose host copies hold the caller (staging) then computes meanwhile.
    index_t loaded = 0;
    auto ensure = [&](index_t upto) {
        for (; loaded <= std::min(upto, n_chunks - 1); ++loaded) load(loaded);
    };
    // Streamed C: the next block's tiles brought in, and the finished blocks' tiles sent back, a
    // share per chunk (a block has at most b·c tiles and Z chunks).
    std::vector<std::pair<index_t, index_t>> out;
    std::size_t out_next = 0;
    const auto share = static_cast<std::size_t>(ceil_div(p.b * p.c, zb));
    auto block_tiles = [&](const Chunk& ch) {
        std::vector<std::pair<index_t, index_t>> v;
        for (index_t j = ch.y * p.c; j < std::min((ch.y + 1) * p.c, nt); ++j)
            for (index_t i = ch.x * p.b; i < std::min((ch.x + 1) * p.b, mt); ++i) v.emplace_back(i, j);
        return v;
    };
    std::vector<std::pair<index_t, index_t>> next_c;  // the tiles of the block after chunk s's
    std::size_t next_c_done = 0;
    auto prefetch_c = [&](index_t s) {
        if (chunks[s].z == 0) {  // a new block: list the next one's tiles
            next_c = s + zb < n_chunks ? block_tiles(chunks[s + zb]) : decltype(next_c){};
            next_c_done = 0;
        }
        for (std::size_t q = 0; q < share && next_c_done < next_c.size(); ++q, ++next_c_done) {
            const auto [i, j] = next_c[next_c_done];
            c_in(static_cast<std::size_t>(j % G), i, j);
        }
    };
    auto flush = [&](std::size_t count) {
        for (; count > 0 && out_next < out.size(); --count, ++out_next) {
            const auto [i, j] = out[out_next];
            const auto g = static_cast<std::size_t>(j % G);
            c_out(g, i, j);
            e.drop(g, Key{2, i, j, 0});
        }
    };
    for (index_t s = 0; s < n_chunks; ++s) {
        ensure(s);
        const Chunk ch = chunks[s];
        const index_t i0 = ch.x * p.b, i1 = std::min(i0 + p.b, mt);
        const index_t l0 = ch.z * p.d, l1 = std::min(l0 + p.d, kt);
        const index_t j0 = ch.y * p.c, j1 = std::min(j0 + p.c, nt);
        for (index_t j = j0; j < j1; ++j) {
            const auto g = static_cast<std::size_t>(j % G);
            for (index_t i = i0; i < i1; ++i) {
                if (ch.z == 0) c_in(g, i, j);  // here unless streamed ahead (or resident)
                void* ct = c_tile(g, i, j);
                for (index_t l = l0; l < l1; ++l) {
                    const void* at = e.get(g, Key{0, i, l, epoch_a(s)});
                    const void* bt = e.get(g, Key{1, l, j, epoch_b(s)});
                    const T* be = l == 0 ? &beta : &one;
                    devs[g]->gemm(scalar_of<T>(), op_a, op_b, rows(i, m), rows(j, n), depth(l), &alpha, at, lda_d, bt,
                                  ldb_d, be, ct, t);
                }
            }
        }
        ensure(s + la);
        if (p.stream_c) {
            prefetch_c(s);
            flush(share);
        }
        for (auto* d : devs) d->barrier();  // the barrier that ends chunk s
        if (ch.z == zb - 1) {
            if (p.stream_c) {
                for (index_t j = j0; j < j1; ++j)
                    for (index_t i = i0; i < i1; ++i) out.emplace_back(i, j);
            } else if (!rc) {
                for (index_t j = j0; j < j1; ++j)
                    for (index_t i = i0; i < i1; ++i) c_out(static_cast<std::size_t>(j % G), i, j);
                for (auto* d : devs) d->barrier();
                for (index_t j = j0; j < j1; ++j)
                    for (index_t i = i0; i < i1; ++i) e.drop(static_cast<std::size_t>(j % G), Key{2, i, j, 0});
            }
        }
        if (p.regime != 'a') e.drop_epoch(0, s);
        if (p.regime == 'c') e.drop_epoch(1, s);
        if (p.regime == 'b' && ch.x == xb - 1 && ch.z == zb - 1) e.drop_epoch(1, ch.y);
    }
    flush(out.size());
    for (auto* d : devs) d->synchronize();  // C is back in host memory (errors surface here)
}

#define CALA_INST(T)                                                                                            \
    template void chunked_gemm<T>(std::span<Device* const>, const ChunkedPlan&, Op, Op, index_t, index_t, index_t, \
                                  T, const T*, index_t, const T*, index_t, T, T*, index_t, std::vector<DeviceTraffic>&, \
                                  ResidentC*);
CALA_FOR_EACH_TYPE(CALA_INST)
#undef CALA_INST

}  // namespace cala::device
