// ScaLAPACK reference for cala-bench: BLACS grid RAII, p?gemm and p?potrf/p?potrs on cala's
// local storage.
//
// cala-bench gemm -> scalapack_ref -> p?gemm_ (libscalapack-mpich) -> ?gemm_ (BLAS)

#include "scalapack_ref.hpp"

#include "kernels/blas.hpp"

#include <mpi.h>
#include <omp.h>

#include <algorithm>
#include <cstddef>
#include <complex>
#include <sstream>
#include <string>
#include <utility>

#include "cala/error.hpp"

// ScaLAPACK, PBLAS and BLACS entry points (Fortran ABI: everything by pointer; PBLAS is written
// in C, so its character arguments carry no hidden lengths). Debian's build uses 32-bit ints.
extern "C" {
void Cblacs_get(int icontxt, int what, int* val);
void Cblacs_gridinit(int* icontxt, const char* order, int nprow, int npcol);
void Cblacs_gridinfo(int icontxt, int* nprow, int* npcol, int* myrow, int* mycol);
void Cblacs_gridexit(int icontxt);

void descinit_(int* desc, const int* m, const int* n, const int* mb, const int* nb, const int* irsrc,
               const int* icsrc, const int* ictxt, const int* lld, int* info);
int numroc_(const int* n, const int* nb, const int* iproc, const int* isrcproc, const int* nprocs);

#define CALA_PGEMM_PROTO(name, T)                                                                        \
    void name(const char* transa, const char* transb, const int* m, const int* n, const int* k,           \
              const T* alpha, const T* a, const int* ia, const int* ja, const int* desca, const T* b,      \
              const int* ib, const int* jb, const int* descb, const T* beta, T* c, const int* ic,          \
              const int* jc, const int* descc);
CALA_PGEMM_PROTO(psgemm_, float)
CALA_PGEMM_PROTO(pdgemm_, double)
CALA_PGEMM_PROTO(pcgemm_, std::complex<float>)
CALA_PGEMM_PROTO(pzgemm_, std::complex<double>)
#undef CALA_PGEMM_PROTO

// ScaLAPACK proper is Fortran: UPLO's hidden length comes last.
#define CALA_PPOTR_PROTO(T, f, s)                                                                        \
    void f(const char* uplo, const int* n, T* a, const int* ia, const int* ja, const int* desca, int* info, \
           std::size_t);                                                                                \
    void s(const char* uplo, const int* n, const int* nrhs, const T* a, const int* ia, const int* ja,     \
           const int* desca, T* b, const int* ib, const int* jb, const int* descb, int* info, std::size_t);
CALA_PPOTR_PROTO(float, pspotrf_, pspotrs_)
CALA_PPOTR_PROTO(double, pdpotrf_, pdpotrs_)
CALA_PPOTR_PROTO(std::complex<float>, pcpotrf_, pcpotrs_)
CALA_PPOTR_PROTO(std::complex<double>, pzpotrf_, pzpotrs_)
#undef CALA_PPOTR_PROTO
}

namespace cala::bench {

namespace {

template <class... A>
std::string cat(const A&... a) {
    std::ostringstream s;
    (s << ... << a);
    return s.str();
}

int to_int(index_t v, const char* what) {
    if (v < 0 || v > 0x7fffffff) throw Error(cat("scalapack: ", what, " is ", v, ", beyond ScaLAPACK's 32-bit int"));
    return static_cast<int>(v);
}

template <class T>
void call_pgemm(const char* ta, const char* tb, const int* m, const int* n, const int* k, const T* alpha,
                const T* a, const int* one, const int* desca, const T* b, const int* descb, const T* beta, T* c,
                const int* descc) {
    if constexpr (std::is_same_v<T, float>) psgemm_(ta, tb, m, n, k, alpha, a, one, one, desca, b, one, one, descb, beta, c, one, one, descc);
    else if constexpr (std::is_same_v<T, double>) pdgemm_(ta, tb, m, n, k, alpha, a, one, one, desca, b, one, one, descb, beta, c, one, one, descc);
    else if constexpr (std::is_same_v<T, std::complex<float>>) pcgemm_(ta, tb, m, n, k, alpha, a, one, one, desca, b, one, one, descb, beta, c, one, one, descc);
    else pzgemm_(ta, tb, m, n, k, alpha, a, one, one, desca, b, one, one, descb, beta, c, one, one, descc);
}

template <class T>
void call_ppotrf(const char* uplo, const int* n, T* a, const int* one, const int* desca, int* info) {
    if constexpr (std::is_same_v<T, float>) pspotrf_(uplo, n, a, one, one, desca, info, 1);
    else if constexpr (std::is_same_v<T, double>) pdpotrf_(uplo, n, a, one, one, desca, info, 1);
    else if constexpr (std::is_same_v<T, std::complex<float>>) pcpotrf_(uplo, n, a, one, one, desca, info, 1);
    else pzpotrf_(uplo, n, a, one, one, desca, info, 1);
}

template <class T>
void call_ppotrs(const char* uplo, const int* n, const int* nrhs, const T* a, const int* one, const int* desca, T* b,
                 const int* descb, int* info) {
    if constexpr (std::is_same_v<T, float>) pspotrs_(uplo, n, nrhs, a, one, one, desca, b, one, one, descb, info, 1);
    else if constexpr (std::is_same_v<T, double>) pdpotrs_(uplo, n, nrhs, a, one, one, desca, b, one, one, descb, info, 1);
    else if constexpr (std::is_same_v<T, std::complex<float>>) pcpotrs_(uplo, n, nrhs, a, one, one, desca, b, one, one, descb, info, 1);
    else pzpotrs_(uplo, n, nrhs, a, one, one, desca, b, one, one, descb, info, 1);
}

// The cala grid of `m` is the BLACS grid `g` (same shape, this rank at the same coordinates).
void check_same_grid(const BlacsGrid& g, const Grid2D& cg) {
    if (cg.order() != GridOrder::RowMajor || cg.p() != g.p() || cg.q() != g.q() || cg.row() != g.row() ||
        cg.col() != g.col())
        throw Error(cat("scalapack: cala grid ", cg.p(), "x", cg.q(), " at (", cg.row(), ",", cg.col(),
                        ") does not match BLACS grid ", g.p(), "x", g.q(), " at (", g.row(), ",", g.col(), ")"));
}

}  // namespace

BlacsGrid::BlacsGrid(int p, int q) : p_(p), q_(q) {
    int size = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (p < 1 || q < 1 || p * q != size)
        throw Error(cat("scalapack: BLACS grid ", p, "x", q, " does not fit ", size, " ranks"));
    Cblacs_get(-1, 0, &ctxt_);  // the system context: MPI_COMM_WORLD
    Cblacs_gridinit(&ctxt_, "Row", p, q);
    int np = 0, nq = 0;
    Cblacs_gridinfo(ctxt_, &np, &nq, &row_, &col_);
    if (np != p || nq != q || row_ < 0 || col_ < 0)
        throw Error(cat("scalapack: Cblacs_gridinit gave a ", np, "x", nq, " grid, asked for ", p, "x", q));
}

BlacsGrid::BlacsGrid(BlacsGrid&& o) noexcept
    : ctxt_(std::exchange(o.ctxt_, -1)), p_(o.p_), q_(o.q_), row_(o.row_), col_(o.col_) {}

BlacsGrid& BlacsGrid::operator=(BlacsGrid&& o) noexcept {
    std::swap(ctxt_, o.ctxt_);
    std::swap(p_, o.p_);
    std::swap(q_, o.q_);
    std::swap(row_, o.row_);
    std::swap(col_, o.col_);
    return *this;
}

BlacsGrid::~BlacsGrid() {
    if (ctxt_ >= 0) Cblacs_gridexit(ctxt_);
}

std::array<int, 9> descriptor(const BlacsGrid& g, const BlockCyclic& l, index_t ld) {
    for (const Dist1D* d : {&l.rows, &l.cols})
        if (d->ib != d->nb && d->n > d->ib)
            throw Error(cat("scalapack: a layout whose first block (", d->ib, ") is smaller than its block size (",
                            d->nb, ") has no descriptor"));
    if (l.p() != g.p() || l.q() != g.q())
        throw Error(cat("scalapack: layout is on a ", l.p(), "x", l.q(), " grid, BLACS grid is ", g.p(), "x", g.q()));
    const int m = to_int(l.m(), "M"), n = to_int(l.n(), "N"), mb = to_int(l.rows.nb, "MB"),
              nb = to_int(l.cols.nb, "NB"), rsrc = l.rows.src, csrc = l.cols.src, ctxt = g.context();
    const int lld = to_int(ld, "LLD");
    std::array<int, 9> desc{};
    int info = 0;
    descinit_(desc.data(), &m, &n, &mb, &nb, &rsrc, &csrc, &ctxt, &lld, &info);
    if (info != 0) throw Error(cat("scalapack: descinit_ rejected the descriptor, info = ", info));
    const int p = g.p(), q = g.q(), row = g.row(), col = g.col();
    const index_t m_loc = numroc_(&m, &mb, &row, &rsrc, &p), n_loc = numroc_(&n, &nb, &col, &csrc, &q);
    if (m_loc != l.rows.local_size(row) || n_loc != l.cols.local_size(col))
        throw Error(cat("scalapack: numroc_ says ", m_loc, "x", n_loc, " local, cala says ",
                        l.rows.local_size(row), "x", l.cols.local_size(col)));
    return desc;
}

template <class T>
void pgemm(const BlacsGrid& g, Op op_a, Op op_b, T alpha, const MatrixRef<T>& a, const MatrixRef<T>& b, T beta,
           const MatrixRef<T>& c) {
    check_same_grid(g, c.grid());
    const auto da = descriptor(g, a.layout(), a.ld());
    const auto db = descriptor(g, b.layout(), b.ld());
    const auto dc = descriptor(g, c.layout(), c.ld());
    const int m = to_int(c.m(), "M"), n = to_int(c.n(), "N");
    const int k = to_int(op_a == Op::N ? a.n() : a.m(), "K");
    const char ta = op_char(op_a), tb = op_char(op_b);
    const int one = 1;
    // ScaLAPACK's ?gemm_ calls bind to the BLIS cala links (LD_DEBUG=bindings shows
    // libscalapack-mpich -> libblis.so.4), whose thread count is the last one set on this
    // thread: give it the OpenMP team size, as cala's own kernels get.
    cala::kernels::set_threads(omp_get_max_threads());
    call_pgemm<T>(&ta, &tb, &m, &n, &k, &alpha, a.data(), &one, da.data(), b.data(), db.data(), &beta, c.data(),
                  dc.data());
}

template <class T>
index_t ppotrf(const BlacsGrid& g, Uplo uplo, const MatrixRef<T>& a) {
    check_same_grid(g, a.grid());
    if (a.m() != a.n() || a.layout().rows.nb != a.layout().cols.nb)
        throw Error(cat("scalapack: p?potrf needs a square matrix in square blocks, got ", a.m(), "x", a.n(), " in ",
                        a.layout().rows.nb, "x", a.layout().cols.nb, " blocks"));
    const auto da = descriptor(g, a.layout(), a.ld());
    const int n = to_int(a.n(), "N"), one = 1;
    const char u = uplo_char(uplo);
    int info = 0;
    cala::kernels::set_threads(omp_get_max_threads());  // ScaLAPACK's BLAS, where libblas.so.3 is BLIS (see pgemm)
    call_ppotrf<T>(&u, &n, a.data(), &one, da.data(), &info);
    if (info < 0) throw Error(cat("scalapack: p?potrf rejected argument ", -info));
    return info;
}

template <class T>
void ppotrs(const BlacsGrid& g, Uplo uplo, const MatrixRef<T>& a, const MatrixRef<T>& b) {
    check_same_grid(g, a.grid());
    check_same_grid(g, b.grid());
    const auto da = descriptor(g, a.layout(), a.ld());
    const auto db = descriptor(g, b.layout(), b.ld());
    const int n = to_int(a.n(), "N"), nrhs = to_int(b.n(), "NRHS"), one = 1;
    const char u = uplo_char(uplo);
    int info = 0;
    cala::kernels::set_threads(omp_get_max_threads());
    call_ppotrs<T>(&u, &n, &nrhs, a.data(), &one, da.data(), b.data(), db.data(), &info);
    if (info != 0) throw Error(cat("scalapack: p?potrs rejected argument ", -info));
}

#define CALA_INST(T)                                                                                     \
    template void pgemm<T>(const BlacsGrid&, Op, Op, T, const MatrixRef<T>&, const MatrixRef<T>&, T,      \
                           const MatrixRef<T>&);                                                          \
    template index_t ppotrf<T>(const BlacsGrid&, Uplo, const MatrixRef<T>&);                              \
    template void ppotrs<T>(const BlacsGrid&, Uplo, const MatrixRef<T>&, const MatrixRef<T>&);
CALA_FOR_EACH_TYPE(CALA_INST)
#undef CALA_INST

}  // namespace cala::bench
