// The process-wide pool of cuSOLVER handles and workspaces (solver_pool.hpp).

#include "solver_pool.hpp"

#include <memory>
#include <mutex>

#include "cuda_check.hpp"
#include "cusolver_check.hpp"

namespace cala::cuda {

namespace {
std::mutex& solver_mutex() {
    static std::mutex m;
    return m;
}
std::vector<Solver*>& solver_pool() {
    static auto* p = new std::vector<Solver*>;  // never destroyed: used from late destructors
    return *p;
}
}  // namespace

Solver* take_solver(int ordinal) {
    {
        std::lock_guard lock(solver_mutex());
        auto& pool = solver_pool();
        for (auto it = pool.begin(); it != pool.end(); ++it)
            if ((*it)->ordinal == ordinal) {
                Solver* s = *it;
                pool.erase(it);
                return s;
            }
    }
    auto s = std::make_unique<Solver>();
    s->ordinal = ordinal;
    CALA_CHECK_CUSOLVER(cusolverDnCreate(&s->h));
    CALA_CHECK_CUSOLVER(cusolverDnCreateParams(&s->params));
    CALA_CHECK_CUDA(cudaMalloc(&s->info, sizeof(int)));
    CALA_CHECK_CUDA(cudaMalloc(&s->first_info, sizeof(long long)));
    return s.release();  // a failure above leaks what was made: rare, and at most once
}
void give_solver(Solver* s) noexcept {
    std::lock_guard lock(solver_mutex());
    solver_pool().push_back(s);
}

}  // namespace cala::cuda
