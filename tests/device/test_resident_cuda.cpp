// Resident matrices and SUMMA on CUDA devices (issue 30): one device per rank where there are
// enough (NCCL), else ranks sharing GPUs (the staged path, NCCL's refusal avoided and said).
// Results against the same product on HostDevice memory, traffic == resident_gemm_cost on every
// rank, a cap exceeded on one rank fails on all; resident potrf (one cusolverDnXpotrf on one
// rank, 2D on device tiles on two, and 2.5D on 1 x 1 x 2) against HostDevice memory and
// resident_potrf_cost; resident trsm, herk and syrk the same way. Exits 77 (meson: skipped) without a GPU.
// (run as: mpiexec.mpich -n N test_resident_cuda, N in {1, 2})

#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>
#include <mpi.h>

#include <complex>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "cala/resident.hpp"
#include "cuda_device.hpp"
#include "support/cholesky.hpp"
#include "support/helpers.hpp"

using namespace cala;

namespace {

ResidentDevice my_gpu(const Comm& world, std::int64_t cap = 0) {
    return ResidentDevice::open(std::to_string(world.rank() % cuda::device_count()), cap);
}

template <class T>
void product_case(const Grid2D& g, const ResidentDevice& gpu, Op oa, Op ob, PanelTransport transport,
                  Variant variant = Variant::Auto, Shape3D g3 = {}) {
    const index_t m = 301, n = 257, k = 263;  // nb = 64 divides none
    const ResidentDevice host = ResidentDevice::open("host", std::int64_t{256} << 20);
    const index_t am = oa == Op::N ? m : k, an = oa == Op::N ? k : m, bm = ob == Op::N ? k : n, bn = ob == Op::N ? n : k;
    DistMatrix<T> ha(g, am, an, 64, 64), hb(g, bm, bn, 64, 64), hc(g, m, n, 64, 64);
    test::randomize(ha.view());
    test::randomize(hb.view());
    test::randomize(hc.view());
    ResidentMatrix<T> a(g, ha.layout(), gpu), b(g, hb.layout(), gpu), c(g, hc.layout(), gpu);
    ResidentMatrix<T> a0(g, ha.layout(), host), b0(g, hb.layout(), host), c0(g, hc.layout(), host);
    for (auto [h, d, d0] : {std::tuple{&ha, &a, &a0}, std::tuple{&hb, &b, &b0}, std::tuple{&hc, &c, &c0}}) {
        redistribute(Op::N, h->view(), *d);
        redistribute(Op::N, h->view(), *d0);
    }
    const auto ga = gather(ha.view()), gb = gather(hb.view()), gc = gather(hc.view());
    const T alpha(0.5), beta(-1);
    gemm(oa, ob, alpha, a0, b0, beta, c0, {.variant = variant, .grid3d = g3});  // the same algorithm on HostDevice memory
    ResidentGemmReport report;
    reset_traffic();

    gemm(oa, ob, alpha, a, b, beta, c, {.variant = variant, .transport = transport, .grid3d = g3, .report = &report});

    const Traffic t = traffic();
    const Cost model = resident_gemm_cost(oa, ob, a.layout(), b.layout(), c.layout(),
                                          {.variant = variant, .transport = transport, .grid3d = g3}, g.row(), g.col(),
                                          sizeof(T), is_complex_v<T>, g.order());
    const auto got = gather(c), on_host = gather(c0);
    double err = 0, vs_host = 0;
    if (g.comm().rank() == 0) {
        const auto ref = test::reference_gemm(oa, ob, m, n, k, alpha, ga, am, gb, bm, beta, gc);
        err = test::gemm_error(got, ref, k);
        vs_host = test::gemm_error(got, test::GemmReference<T>{on_host, ref.scale}, k);
    }
    const bool own_gpus = cuda::device_count() >= g.comm().size();
    const PanelTransport want = g.comm().size() == 1 || transport == PanelTransport::Staged || !own_gpus
                                    ? PanelTransport::Staged
                                    : PanelTransport::Nccl;
    CAPTURE(report.reason);
    CHECK(test::all_ranks(err < 2.0 && vs_host < 4.0, g));
    CHECK(test::all_ranks(t.words() == model.words && t.msgs() == model.msgs, g));
    CHECK(test::all_ranks(report.transport == want, g));
    CHECK(test::all_ranks(variant == Variant::Auto || report.variant == variant, g));
    CHECK(test::all_ranks(report.grid3d.c == g3.c, g));
    if (g.comm().size() > 1 && !own_gpus && transport == PanelTransport::Auto)
        CHECK(report.reason.find("share CUDA device") != std::string::npos);
}

}  // namespace

TEST_CASE_TEMPLATE("resident gemm on CUDA devices matches HostDevice memory and the model", T, double,
                   std::complex<float>) {
    const Comm world = Comm::borrow(MPI_COMM_WORLD);
    const ResidentDevice gpu = my_gpu(world);
    for (int p = 1; p <= world.size(); ++p) {
        if (world.size() % p) continue;
        const Grid2D g(world, p, world.size() / p);
        for (PanelTransport tr : {PanelTransport::Auto, PanelTransport::Staged}) {
            product_case<T>(g, gpu, Op::N, Op::N, tr);
            product_case<T>(g, gpu, Op::T, Op::C, tr);
            // the partial sums' path: ncclReduce or staged ireduce, cublas geam into C
            for (Variant v : {Variant::StationaryA, Variant::StationaryB}) {
                product_case<T>(g, gpu, Op::N, Op::T, tr, v);
                product_case<T>(g, gpu, Op::C, Op::N, tr, v);
            }
            // 2.5D: k over every rank's layer (the layers' 1 x 1 products, the fiber sum staged)
            // and the planner's variant on the same grid
            for (Variant v : {Variant::StationaryC, Variant::Auto})
                product_case<T>(g, gpu, Op::N, Op::T, tr, v, {1, 1, world.size()});
        }
    }
}

namespace {

template <class T>
void potrf_case(const Grid2D& g, const ResidentDevice& gpu, Uplo uplo, PanelTransport transport, Shape3D layers = {}) {
    const index_t n = 389, nb = 64;  // nb does not divide n
    const ResidentDevice host = ResidentDevice::open("host", std::int64_t{256} << 20);
    std::vector<T> spd;
    if (g.comm().rank() == 0) spd = test::make_spd(std::vector<T>(static_cast<std::size_t>(n * n)), n, 0, n, -1);
    ResidentMatrix<T> a(g, n, n, nb, nb, gpu), a0(g, n, n, nb, nb, host);
    scatter(spd.data(), n, a);
    scatter(spd.data(), n, a0);
    // The same algorithm on HostDevice memory (layers: the replicated-diagonal 2.5D one, Repl).
    ResidentPotrfOptions opts{.transport = transport};
    if (layers.c > 1) opts.variant = CholeskyVariant::Repl, opts.grid3d = layers;
    const index_t info0 = potrf(uplo, a0, ResidentPotrfOptions{.variant = opts.variant, .grid3d = layers});
    reset_traffic();

    const index_t info = potrf(uplo, a, opts);

    const Traffic t = traffic();
    const Cost model =
        resident_potrf_cost(uplo, a.layout(), opts, g.row(), g.col(), sizeof(T), is_complex_v<T>, g.order());
    const auto got = gather(a), on_host = gather(a0);
    double err = 0, gap = 0;
    if (g.comm().rank() == 0) {
        err = test::factor_error(spd, got, n, 0, n, uplo);
        double hmax = 0;
        for (index_t j = 0; j < n; ++j)
            for (index_t i = 0; i < n; ++i)
                if (uplo == Uplo::Lower ? i >= j : i <= j) {
                    gap = std::max(gap, double(std::abs(got[i + j * n] - on_host[i + j * n])));
                    hmax = std::max(hmax, double(std::abs(on_host[i + j * n])));
                }
        gap /= double(n) * hmax * double(eps<T>());
    }
    CHECK(test::all_ranks(info == 0 && info0 == 0, g));
    CHECK(test::all_ranks(err < 30.0 && gap < 30.0, g));
    CHECK(test::all_ranks(t.words() == model.words && t.msgs() == model.msgs, g));
}

}  // namespace

TEST_CASE_TEMPLATE("resident potrf on CUDA devices matches HostDevice memory and the model", T, double,
                   std::complex<float>) {
    const Comm world = Comm::borrow(MPI_COMM_WORLD);
    const ResidentDevice gpu = my_gpu(world);
    for (int p = 1; p <= world.size(); ++p) {
        if (world.size() % p) continue;
        const Grid2D g(world, p, world.size() / p);
        for (Uplo uplo : {Uplo::Lower, Uplo::Upper})
            for (PanelTransport tr : {PanelTransport::Auto, PanelTransport::Staged}) {
                if (std::getenv("CALA_TEST_TRACE"))  // which case a hang is in (scripts/gpu/check resident2)
                    std::fprintf(stderr, "rank %d: potrf case grid %dx%d %s %s\n", world.rank(), g.p(), g.q(),
                                 uplo == Uplo::Lower ? "L" : "U", tr == PanelTransport::Auto ? "auto" : "staged");
                potrf_case<T>(g, gpu, uplo, tr);
                // The replicated-diagonal 2.5D schedule over every rank (layers of one rank each).
                if (world.size() > 1 && p == 1) potrf_case<T>(g, gpu, uplo, tr, {1, 1, world.size()});
            }
    }
}

namespace {

// max |x - y| / (n·eps·max |y|) over two gathered arrays.
template <class T>
double gap_of(const std::vector<T>& x, const std::vector<T>& y, index_t n) {
    double gap = 0, ymax = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        gap = std::max(gap, double(std::abs(x[i] - y[i])));
        ymax = std::max(ymax, double(std::abs(y[i])));
    }
    return gap == 0 ? 0.0 : gap / (double(n) * (ymax + 1e-300) * double(eps<T>()));
}

// Resident trsm (cublas?trsm on one rank; the 2D solves on device tiles on two), herk and syrk
// (the triangle's SUMMA: cublas?gemm off the diagonal tiles, ?syrk / ?herk on them) against the same
// algorithms on HostDevice memory, traffic == the models.
template <class T>
void trsm_herk_case(const Grid2D& g, const ResidentDevice& gpu, Side side, Uplo uplo, Op op, Diag diag,
                    PanelTransport transport) {
    const index_t m = 301, n = 157, k = side == Side::Left ? m : n, nb = 64;  // nb divides none
    const ResidentDevice host = ResidentDevice::open("host", std::int64_t{256} << 20);
    std::vector<T> ga, gb;
    if (g.comm().rank() == 0) {
        for (index_t j = 0; j < k; ++j)
            for (index_t i = 0; i < k; ++i)
                ga.push_back(i == j ? T(2) : test::random_value<T>(test::rng()) * T(1.0 / double(k)));
        for (index_t i = 0; i < m * n; ++i) gb.push_back(test::random_value<T>(test::rng()));
    }
    ResidentMatrix<T> a(g, k, k, nb, nb, gpu), b(g, m, n, nb, nb, gpu), a0(g, k, k, nb, nb, host),
        b0(g, m, n, nb, nb, host);
    scatter(ga.data(), k, a), scatter(ga.data(), k, a0), scatter(gb.data(), m, b), scatter(gb.data(), m, b0);
    const T alpha(0.75);
    const ResidentPotrfOptions opts{.transport = transport};
    trsm(side, uplo, op, diag, alpha, a0, b0, opts);
    reset_traffic();
    trsm(side, uplo, op, diag, alpha, a, b, opts);
    Traffic t = traffic();
    Cost model = resident_trsm_cost(side, uplo, op, a.layout(), b.layout(), opts, g.row(), g.col(), sizeof(T),
                                    is_complex_v<T>);
    const auto xb = gather(b), xb0 = gather(b0);  // collective, in this order on every rank
    double gap = g.comm().rank() == 0 ? gap_of(xb, xb0, k) : 0.0;
    CHECK(test::all_ranks(gap < 30.0, g));
    CHECK(test::all_ranks(t.words() == model.words && t.msgs() == model.msgs, g));

    // herk: C (m x m, from B's rows) := 0.5·B·Bᴴ - C on its triangle
    ResidentMatrix<T> c(g, m, m, nb, nb, gpu), c0(g, m, m, nb, nb, host);
    std::vector<T> gc;
    if (g.comm().rank() == 0)
        for (index_t i = 0; i < m * m; ++i) gc.push_back(test::random_value<T>(test::rng()));
    scatter(gc.data(), m, c), scatter(gc.data(), m, c0), scatter(gb.data(), m, b), scatter(gb.data(), m, b0);
    const ResidentGemmOptions hopts{.panel_width = 64, .transport = transport};  // several groups
    herk(uplo, real_t<T>(0.5), b0, real_t<T>(-1), c0, hopts);
    reset_traffic();
    herk(uplo, real_t<T>(0.5), b, real_t<T>(-1), c, hopts);
    t = traffic();
    model = resident_herk_cost(uplo, b.layout(), c.layout(), hopts, g.row(), g.col(), sizeof(T), is_complex_v<T>);
    const auto xc = gather(c), xc0 = gather(c0);
    gap = g.comm().rank() == 0 ? gap_of(xc, xc0, n) : 0.0;
    CHECK(test::all_ranks(gap < 30.0, g));
    CHECK(test::all_ranks(t.words() == model.words && t.msgs() == model.msgs, g));

    // alpha = 0: the triangle scaled by beta (depth-0 products; herk of depth 0 makes the diagonal real)
    herk(uplo, real_t<T>(0), b0, real_t<T>(0.5), c0, hopts);
    herk(uplo, real_t<T>(0), b, real_t<T>(0.5), c, hopts);
    const auto yc = gather(c), yc0 = gather(c0);
    CHECK(test::all_ranks(g.comm().rank() != 0 || gap_of(yc, yc0, n) < 30.0, g));

    // syrk: C := alpha·B·Bᵀ + beta·C with complex scalars (cublas?syrk on the diagonal tiles)
    T sa = T(0.5);
    if constexpr (is_complex_v<T>) sa = T(0.5, 0.25);
    const T sb = T(-1);
    syrk(uplo, sa, b0, sb, c0, hopts);
    reset_traffic();
    syrk(uplo, sa, b, sb, c, hopts);
    t = traffic();
    model = resident_syrk_cost(uplo, b.layout(), c.layout(), hopts, g.row(), g.col(), sizeof(T), is_complex_v<T>);
    const auto zc = gather(c), zc0 = gather(c0);
    CHECK(test::all_ranks(g.comm().rank() != 0 || gap_of(zc, zc0, n) < 30.0, g));
    CHECK(test::all_ranks(t.words() == model.words && t.msgs() == model.msgs, g));
}

}  // namespace

TEST_CASE_TEMPLATE("resident trsm, herk and syrk on CUDA devices match HostDevice memory and the models", T, double,
                   std::complex<float>) {
    const Comm world = Comm::borrow(MPI_COMM_WORLD);
    const ResidentDevice gpu = my_gpu(world);
    for (int p = 1; p <= world.size(); ++p) {
        if (world.size() % p) continue;
        const Grid2D g(world, p, world.size() / p);
        for (PanelTransport tr : {PanelTransport::Auto, PanelTransport::Staged}) {
            trsm_herk_case<T>(g, gpu, Side::Left, Uplo::Lower, Op::N, Diag::NonUnit, tr);
            trsm_herk_case<T>(g, gpu, Side::Right, Uplo::Upper, Op::C, Diag::Unit, tr);
        }
    }
}

TEST_CASE("a CUDA device's cap exceeded on one rank fails on every rank") {
    const Comm world = Comm::borrow(MPI_COMM_WORLD);
    const Grid2D g(world, 1, world.size());
    const bool last = world.rank() == world.size() - 1;
    const ResidentDevice gpu = my_gpu(world, last ? (std::int64_t{1} << 20) : 0);

    const std::string msg = test::error_message([&] { ResidentMatrix<double> big(g, 4096, 4096, 256, 256, gpu); });

    CHECK(test::all_ranks(msg.find("ResidentMatrix: allocating") != std::string::npos, g));
    CHECK(gpu.used_bytes() == 0);
}

int main(int argc, char** argv) {
    int provided = 0, rank = 0, size = 1;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char* want = std::getenv("CALA_TEST_NPROCS");
    if (want == nullptr || std::atoi(want) != size) {
        if (rank == 0)
            std::fprintf(stderr, "test_resident_cuda: registered for CALA_TEST_NPROCS=%s ranks, world has %d\n",
                         want ? want : "(unset)", size);
        MPI_Finalize();
        return 2;
    }
    if (cuda::device_count() == 0) {
        if (rank == 0) std::fprintf(stderr, "test_resident_cuda: no CUDA device, skipped\n");
        MPI_Finalize();
        return 77;
    }
    doctest::Context ctx(argc, argv);
    // Every rank reports: a device failure on one rank alone is seen only there.
    int any = ctx.run() != 0;
    MPI_Allreduce(MPI_IN_PLACE, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Finalize();
    return any;
}
