// An upper bound on cala::getrf's traffic per rank (getrf_cost without the pivots) for an n x n
// matrix in nb x nb blocks on a p x q grid, as words_compare.py prints it beside the measured words. No MPI.
//
//   lu_words_model n nb p q   ->   {"n":..,"nb":..,"p":..,"q":..,"words_max":..,"words_mean":..,"msgs_max":..}

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "cala/lu.hpp"

int main(int argc, char** argv) {
    if (argc != 5) {
        std::fprintf(stderr, "usage: %s n nb p q\n", argv[0]);
        return 1;
    }
    const long n = std::atol(argv[1]), nb = std::atol(argv[2]);
    const int p = std::atoi(argv[3]), q = std::atoi(argv[4]);
    const cala::BlockCyclic a(n, n, nb, nb, p, q);
    long long wmax = 0, wsum = 0, mmax = 0;
    for (int r = 0; r < p; ++r)
        for (int c = 0; c < q; ++c) {
            const cala::Cost cost = cala::getrf_cost(a, cala::LuOptions{}, r, c, sizeof(double), false);
            wmax = std::max<long long>(wmax, cost.words);
            mmax = std::max<long long>(mmax, cost.msgs);
            wsum += cost.words;
        }
    std::printf("{\"n\":%ld,\"nb\":%ld,\"p\":%d,\"q\":%d,\"words_max\":%lld,\"words_mean\":%.1f,\"msgs_max\":%lld}\n", n,
                nb, p, q, wmax, static_cast<double>(wsum) / (p * q), mmax);
    return 0;
}
