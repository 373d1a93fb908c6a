// The node runtime's stealing policies (steal.hpp): RandSteal and EffectiveSteal.

#include "node/steal.hpp"

#include <algorithm>
#include <iterator>
#include <utility>

namespace cala::node::detail {

namespace {
int take_last(TaskList& l) {
    if (l.empty()) return -1;
    const int t = l.back();
    l.pop_back();
    return t;
}
}  // namespace

int rand_steal(int u, std::vector<TaskList>& lists, std::mt19937& rng) {
    const int g = static_cast<int>(lists.size());
    if (g < 2) return -1;
    const int start = std::uniform_int_distribution<int>(0, g - 2)(rng);
    for (int q = 0; q < g - 1; ++q) {
        int v = (start + q) % (g - 1);
        if (v >= u) ++v;
        if (const int t = take_last(lists[static_cast<std::size_t>(v)]); t >= 0) return t;
    }
    return -1;
}

int effective_steal(int u, std::vector<TaskList>& lists, std::mt19937& rng, const std::function<int(int)>& cost,
                    std::unique_lock<std::mutex>& lk) {
    const int g = static_cast<int>(lists.size());
    std::vector<std::pair<int, int>> seen;  // (cost, task)
    for (int v = 0; v < g; ++v) {
        if (v == u) continue;
        auto& l = lists[static_cast<std::size_t>(v)];
        for (auto it = l.rbegin(); it != l.rend(); ++it) {
            const int c = cost(*it);
            if (c == 0) {
                const int t = *it;
                l.erase(std::next(it).base());
                return t;
            }
            if (c <= 2) seen.emplace_back(c, *it);
        }
    }
    lk.unlock();
    std::stable_sort(seen.begin(), seen.end());
    lk.lock();
    for (auto [c, t] : seen)
        for (int v = 0; v < g; ++v) {
            if (v == u) continue;
            auto& l = lists[static_cast<std::size_t>(v)];
            if (auto it = std::find(l.begin(), l.end(), t); it != l.end()) {
                l.erase(it);
                return t;
            }
        }
    return rand_steal(u, lists, rng);
}

}  // namespace cala::node::detail
