#pragma once
// How a rank's OpenMP threads share the panel of cala::potrf's engine (engine.cpp) while the
// others run update tasks: an aggregated team reserved for one multithreaded kernel call
// (PanelMode::Aggregated), or row blocks that free threads join (PanelMode::Shared).
// Both are called from the thread that drives the loop, inside its parallel region.

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <thread>

#include "cala/types.hpp"
#include "kernels/blas.hpp"

namespace cala::detail {

// k-1 of the rank's OpenMP threads set aside (asleep) while the calling thread runs a kernel
// on k threads: the aggregated panel worker of Cojean et al. The reservations are tasks, so a
// thread joins once it finishes the update tile it is running.
class Aggregate {
public:
    explicit Aggregate(int k) : k_(k) {
        if (k_ <= 1) return;
        const int creator = omp_get_thread_num();
        for (int t = 1; t < k_; ++t) {
#pragma omp task priority(2) shared(joined_, skipped_, release_, left_) firstprivate(creator)
            {
                if (omp_get_thread_num() == creator) {  // run undeferred: not a second core
                    skipped_.fetch_add(1);
                } else {
                    joined_.fetch_add(1);
                    while (release_.load() == 0) release_.wait(0);
                    left_.fetch_add(1);  // the last access: ~Aggregate waits for it
                }
            }
        }
        while (joined_.load() + skipped_.load() < k_ - 1) std::this_thread::yield();
        k_ = joined_.load() + 1;
    }
    int size() const noexcept { return k_; }
    ~Aggregate() {
        if (k_ <= 1) return;
        release_.store(1);
        release_.notify_all();
        while (left_.load() < k_ - 1) std::this_thread::yield();
    }
    Aggregate(const Aggregate&) = delete;
    Aggregate& operator=(const Aggregate&) = delete;

private:
    int k_;
    std::atomic<int> joined_{0}, skipped_{0}, left_{0};
    std::atomic<int> release_{0};
};

// Runs body(c) for c = 0..n-1 on this thread and on team threads that free up meanwhile:
// threads - 1 top-priority helper tasks take chunks from a shared counter, so a thread still
// inside a long update task joins late or not at all and never holds this one up.
// threads <= 1: the calling thread alone.
template <class F>
void crew(int threads, index_t n, F&& body) {
    if (threads <= 1 || n <= 1) {
        for (index_t c = 0; c < n; ++c) body(c);
        return;
    }
    struct State {
        std::atomic<index_t> next{0}, done{0};
    };
    auto st = std::make_shared<State>();  // outlives this call in helpers that come late
    auto* fn = &body;                     // called only for a chunk this call waits for
    const int helpers = static_cast<int>(std::min<index_t>(threads, n)) - 1;
    for (int t = 0; t < helpers; ++t) {
#pragma omp task priority(2) firstprivate(st, fn, n)
        {
            kernels::ThreadScope one(1);
            for (index_t c = st->next.fetch_add(1); c < n; c = st->next.fetch_add(1)) {
                (*fn)(c);
                st->done.fetch_add(1);
            }
        }
    }
    for (index_t c = st->next.fetch_add(1); c < n; c = st->next.fetch_add(1)) {
        body(c);
        st->done.fetch_add(1);
    }
    while (st->done.load() < n) std::this_thread::yield();
}

}  // namespace cala::detail
