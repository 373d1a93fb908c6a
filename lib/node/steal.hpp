#pragma once
// Internal: the stealing policies of the node runtime (runtime.hpp). A unit whose prefetch
// window is not full and whose own list is empty takes a task from another unit's list; tasks
// in a prefetch window are never in a list, so they are never stolen. Called with the
// runtime's lock held.

#include <deque>
#include <functional>
#include <mutex>
#include <random>
#include <vector>

namespace cala::node::detail {

/// The tasks a unit has not yet taken into its prefetch window, in list order.
using TaskList = std::deque<int>;

/// RandSteal: the last task of the first non-empty list, starting at a random victim != u.
/// Returns the task, removed from its list, or -1.
int rand_steal(int u, std::vector<TaskList>& lists, std::mt19937& rng);

/// EffectiveSteal (seed 4.2.1): pass 1 over every other list takes a task of cost 0 at once
/// (cost: tiles to move to u, 0..3), else remembers the tasks of cost 1 or 2; pass 2 (after
/// the lock was let go, so the lists may have changed) takes the cheapest remembered task still
/// listed; else RandSteal.
int effective_steal(int u, std::vector<TaskList>& lists, std::mt19937& rng, const std::function<int(int)>& cost,
                    std::unique_lock<std::mutex>& lk);

}  // namespace cala::node::detail
