// The choice of BLIS kernel set (lib/kernels/arch.hpp): the logic on mocked CPUID bits and FMA
// rates, and in this process and child processes, that BLIS runs the set cala chose.

#include <doctest/doctest.h>

#include <blis.h>
#include <unistd.h>

#include <cstdio>
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <map>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "cala/error.hpp"
#include "cala/runtime.hpp"
#include "kernels/arch.hpp"
#include "kernels/openblas.hpp"

using cala::kernels::choose_kernel_set;
using cala::kernels::CpuInfo;
using cala::kernels::FmaRates;

namespace {

// A child started by the tests below with CALA_TEST_PRINT_ARCH=1 prints the kernel set BLIS
// runs (after libcala's constructor chose it) and exits before doctest starts.
// With CALA_TEST_PROBE=<set> it prints the DGEMM probe's rate of that set (BLIS not yet started
// in it, as at load; with CALA_TEST_PROBE_THREAD, while a second thread runs) and exits.
[[gnu::constructor]] void print_arch_and_exit() {
    if (const char* set = std::getenv("CALA_TEST_PROBE")) {
        std::promise<void> stop;  // CALA_TEST_PROBE_THREAD: a second thread alive during the probe
        std::thread other;
        if (std::getenv("CALA_TEST_PROBE_THREAD")) other = std::thread([f = stop.get_future()]() mutable { f.wait(); });
        const std::string what = set;
        const cala::kernels::ProbeShape small{256, 192, 64, 512, 2};
        if (what.rfind("pair:", 0) == 0) {  // pair:<set>:<path>
            const auto colon = what.find(':', 5);
            const auto both = cala::kernels::probe_libraries_gflops(what.substr(5, colon - 5), what.substr(colon + 1), small);
            stop.set_value();
            if (other.joinable()) other.join();
            std::printf("probe=%g,%g\n", both[0], both[1]);
            std::fflush(stdout);
            _exit(0);
        }
        if (what.rfind("cores:", 0) == 0) {  // cores:<own>:<candidate>:<path>
            const auto c1 = what.find(':', 6), c2 = what.find(':', c1 + 1);
            const auto both = cala::kernels::probe_openblas_cores_gflops(
                what.substr(c2 + 1), {what.substr(6, c1 - 6), what.substr(c1 + 1, c2 - c1 - 1)}, small);
            stop.set_value();
            if (other.joinable()) other.join();
            std::printf("probe=%g,%g\n", both[0], both[1]);
            std::fflush(stdout);
            _exit(0);
        }
        const double rate = what.rfind("openblas:", 0) == 0 ? cala::kernels::probe_openblas_gflops(what.substr(9), small)
                                                            : cala::kernels::probe_gemm_gflops(what, small);
        stop.set_value();
        if (other.joinable()) other.join();
        std::printf("probe=%g\n", rate);
        std::fflush(stdout);
        _exit(0);
    }
    if (const char* core = std::getenv("CALA_TEST_SWITCH")) {  // switch_openblas_core in this process
        const std::string path = cala::kernels::openblas_path();
        const cala::kernels::OpenBlas* ob = cala::kernels::load_openblas(path);
        const std::string before = ob ? ob->core : "";
        const bool ok = ob && cala::kernels::switch_openblas_core(path, core, "test rates");
        std::printf("switched=%d before=%s core=%s rates=%s\n", ok ? 1 : 0, before.c_str(), ob ? ob->core.c_str() : "",
                    ob ? ob->core_rates.c_str() : "");
        std::fflush(stdout);
        _exit(0);
    }
    if (std::getenv("CALA_TEST_PRINT_LIBRARY")) {
        try {
            std::printf("library=%s\n", cala::blas_library_name().c_str());
        } catch (const cala::Error& e) {
            std::printf("refused=%s library=%s\n", e.what(), cala::kernels::active_openblas() ? "openblas" : "blis");
        }
        std::fflush(stdout);
        _exit(0);
    }
    if (std::getenv("CALA_TEST_PRINT_ARCH") == nullptr) return;
    try {
        std::printf("kernels=%s\n", cala::blas_kernel_name().c_str());
    } catch (const cala::Error& e) {
        bli_init();  // BLIS 0.9 aborts on an arch query before its init when BLIS_ARCH_TYPE is set
        std::printf("refused=%s kernels=%s\n", e.what(), bli_arch_string(bli_arch_query_id()));
    }
    std::fflush(stdout);
    _exit(0);
}

CpuInfo avx2_cpu(CpuInfo::Vendor v, unsigned family, unsigned model) {
    CpuInfo c;
    c.vendor = v, c.family = family, c.model = model;
    c.ssse3 = c.avx = c.fma3 = c.avx2 = true;
    return c;
}

CpuInfo avx512_cpu(CpuInfo::Vendor v, unsigned family, unsigned model) {
    CpuInfo c = avx2_cpu(v, family, model);
    c.avx512f = c.avx512dq = c.avx512cd = c.avx512bw = c.avx512vl = true;
    return c;
}

// A measurement that counts its calls.
struct Mock {
    FmaRates rates;
    int calls = 0;
    std::function<FmaRates()> fn() {
        return [this] {
            ++calls;
            return rates;
        };
    }
};

std::string child_cache_dir() { return "/tmp/cala-test-blas-arch-" + std::to_string(getpid()); }

// Writes `r` into the children's machine cache: they then choose on the rates this process judged
// (two measurements on a busy machine may fall on either side of the line between one 512-bit FMA
// unit and two, CI's ASan run once saw skx here and zen3 in a child).
// The DGEMM probe's rates go there too (`gemm`, set -> GF/s).
void seed_child_cache(const FmaRates& r, const std::map<std::string, double>& gemm = {}) {
    const char* old = std::getenv("CALA_CACHE_DIR");
    const std::string saved = old ? old : "";
    setenv("CALA_CACHE_DIR", child_cache_dir().c_str(), 1);
    std::vector<std::pair<std::string, std::string>> kv = {{"fma256_gflops_core", std::to_string(r.gflops_256)},
                                                           {"fma512_gflops_core", std::to_string(r.gflops_512)}};
    for (const auto& [set, g] : gemm) kv.emplace_back("dgemm_gflops_core_" + set, std::to_string(g));
    cala::kernels::machine_cache_put(kv);
    if (old) setenv("CALA_CACHE_DIR", saved.c_str(), 1);
    else unsetenv("CALA_CACHE_DIR");
}

// Output of this test binary run as a child with `env` (VAR=value ...) and CALA_TEST_PRINT_ARCH=1.
std::string child(const std::string& env) {
    char self[4096] = {};
    const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    REQUIRE(n > 0);
    const std::string cmd = "env -u CALA_BLAS_ARCH -u BLIS_ARCH_TYPE -u CALA_BLAS -u CALA_OPENBLAS -u CALA_OPENBLAS_CORETYPE "
                            "-u OPENBLAS_CORETYPE CALA_CACHE_DIR=" +
                            child_cache_dir() +
                            " CALA_TEST_PRINT_ARCH=1 " + env + " '" + self + "' 2>&1";
    FILE* p = popen(cmd.c_str(), "r");
    REQUIRE(p != nullptr);
    std::string out;
    char buf[512];
    while (std::fgets(buf, sizeof buf, p)) out += buf;
    pclose(p);
    return out;
}

}  // namespace

TEST_CASE("an Intel CPU with AVX-512 runs skx with two FMA units and haswell with one") {
    const CpuInfo xeon = avx512_cpu(CpuInfo::Vendor::Intel, 6, 0x55);
    Mock two{{40.0, 74.0}}, one{{40.0, 36.0}};

    const auto k2 = choose_kernel_set("auto", xeon, two.fn());
    const auto k1 = choose_kernel_set("", xeon, one.fn());

    CHECK(k2.name == "skx");
    CHECK(two.calls == 1);
    CHECK(k2.rates.gflops_512 == 74.0);
    CHECK(k1.name == "haswell");
    CHECK(one.calls == 1);
    CHECK(k1.setting == "auto");
    CHECK(k1.reason.find("one 512-bit FMA unit") != std::string::npos);
}

TEST_CASE("without a DGEMM probe: Zen 4 (512-bit FMAs in two halves) runs zen3, Zen 5 (full width) skx") {
    const CpuInfo zen4 = avx512_cpu(CpuInfo::Vendor::Amd, 0x19, 0x11), zen5 = avx512_cpu(CpuInfo::Vendor::Amd, 0x1a, 0x02);
    Mock halves{{60.0, 61.0}}, full{{60.0, 118.0}};

    CHECK(choose_kernel_set("auto", zen4, halves.fn()).name == "zen3");
    CHECK(choose_kernel_set("auto", zen5, full.fn()).name == "skx");
    CHECK(choose_kernel_set("auto", zen5, halves.fn()).name == "zen3");
}

// A DGEMM probe with given rates per set, recording which sets it was asked for.
struct GemmMock {
    explicit GemmMock(std::map<std::string, double> r = {}) : rate(std::move(r)) {}
    std::map<std::string, double> rate;
    std::vector<std::string> asked;
    cala::kernels::GemmRateFn fn() {
        return [this](const std::string& set) {
            asked.push_back(set);
            return rate.count(set) ? rate.at(set) : 0.0;
        };
    }
};

TEST_CASE("AVX-512: the measured DGEMM decides between skx and the AVX2 set, whatever the FMA units say") {
    const CpuInfo zen4 = avx512_cpu(CpuInfo::Vendor::Amd, 0x19, 0x11), xeon = avx512_cpu(CpuInfo::Vendor::Intel, 6, 0x55);
    Mock halves{{56.0, 56.5}}, two{{40.0, 74.0}};
    GemmMock zen4_measured{{{"skx", 49.4}, {"zen3", 40.1}}}, zen3_faster{{{"skx", 40.0}, {"zen3", 49.0}}},
        xeon_haswell{{{"skx", 60.0}, {"haswell", 70.0}}};

    const auto z = choose_kernel_set("auto", zen4, halves.fn(), zen4_measured.fn());
    const auto z3 = choose_kernel_set("auto", zen4, halves.fn(), zen3_faster.fn());
    const auto x = choose_kernel_set("auto", xeon, two.fn(), xeon_haswell.fn());

    CHECK(z.name == "skx");
    CHECK(zen4_measured.asked == std::vector<std::string>{"skx", "zen3"});
    REQUIRE(z.gemm.size() == 2);
    CHECK(z.gemm[0].set == "skx");
    CHECK(z.gemm[0].gflops == 49.4);
    CHECK(z.gemm[1].gflops == 40.1);
    CHECK(z.reason.find("faster DGEMM measured (DGEMM skx 49.4 GF/s, zen3 40.1 GF/s") != std::string::npos);
    CHECK(z3.name == "zen3");
    CHECK(x.name == "haswell");
    CHECK(xeon_haswell.asked == std::vector<std::string>{"skx", "haswell"});
}

TEST_CASE("AVX-512: a DGEMM tie (within 3%) or a failed probe leaves the choice to the FMA units") {
    const CpuInfo zen4 = avx512_cpu(CpuInfo::Vendor::Amd, 0x19, 0x11), zen5 = avx512_cpu(CpuInfo::Vendor::Amd, 0x1a, 0x02);
    Mock halves{{56.0, 56.5}}, full{{60.0, 118.0}};
    GemmMock tie{{{"skx", 49.0}, {"zen3", 48.0}}}, failed{{{"skx", 49.0}}}, none{};

    const auto t = choose_kernel_set("auto", zen4, halves.fn(), tie.fn());
    const auto f = choose_kernel_set("auto", zen4, halves.fn(), failed.fn());
    const auto t5 = choose_kernel_set("auto", zen5, full.fn(), tie.fn());

    CHECK(t.name == "zen3");
    CHECK(t.reason.find("DGEMM within 3%") != std::string::npos);
    CHECK(f.name == "zen3");
    CHECK(f.reason.find("DGEMM probe failed") != std::string::npos);
    CHECK(t5.name == "skx");
    CHECK(choose_kernel_set("auto", zen5, full.fn(), none.fn()).name == "skx");
}

TEST_CASE("AVX2-only CPUs get BLIS's AVX2 set for their vendor and family, without a measurement") {
    Mock m{{50.0, 0.0}};
    GemmMock g{{{"zen3", 10.0}, {"haswell", 90.0}}};
    CHECK(choose_kernel_set("auto", avx2_cpu(CpuInfo::Vendor::Amd, 0x19, 0x01), m.fn(), g.fn()).name == "zen3");
    CHECK(g.asked.empty());

    CHECK(choose_kernel_set("auto", avx2_cpu(CpuInfo::Vendor::Intel, 6, 0x3f), m.fn()).name == "haswell");
    CHECK(choose_kernel_set("auto", avx2_cpu(CpuInfo::Vendor::Amd, 0x17, 0x01), m.fn()).name == "zen");
    CHECK(choose_kernel_set("auto", avx2_cpu(CpuInfo::Vendor::Amd, 0x17, 0x31), m.fn()).name == "zen2");
    CHECK(choose_kernel_set("auto", avx2_cpu(CpuInfo::Vendor::Amd, 0x19, 0x01), m.fn()).name == "zen3");
    CHECK(choose_kernel_set("auto", avx2_cpu(CpuInfo::Vendor::Amd, 0x1a, 0x44), m.fn()).name == "zen3");
    CHECK(choose_kernel_set("auto", avx2_cpu(CpuInfo::Vendor::Other, 6, 0x0f), m.fn()).name == "haswell");
    CHECK(m.calls == 0);
}

TEST_CASE("AVX-512 bits without the OS saving ZMM, or no AVX2 at all: no AVX-512, or BLIS's own choice") {
    CpuInfo no_zmm = avx2_cpu(CpuInfo::Vendor::Intel, 6, 0x55);  // read_cpu_info clears avx512* then
    CpuInfo old;
    old.vendor = CpuInfo::Vendor::Intel, old.family = 6, old.ssse3 = old.avx = true;
    Mock m{{40.0, 80.0}};

    CHECK(choose_kernel_set("auto", no_zmm, m.fn()).name == "haswell");
    CHECK(choose_kernel_set("auto", old, m.fn()).name.empty());
    CHECK(m.calls == 0);
}

TEST_CASE("CALA_BLAS_ARCH: keep leaves BLIS's choice, a name forces it, a bad one is a clear error") {
    const CpuInfo zen3 = avx2_cpu(CpuInfo::Vendor::Amd, 0x19, 0x01);
    Mock m{{50.0, 0.0}};

    const auto keep = choose_kernel_set("keep", zen3, m.fn());
    const auto forced = choose_kernel_set("sandybridge", zen3, m.fn());

    CHECK(keep.name.empty());
    CHECK(keep.setting == "keep");
    CHECK(forced.name == "sandybridge");
    CHECK(choose_kernel_set("generic", zen3, m.fn()).name == "generic");
    CHECK(m.calls == 0);
    CHECK_THROWS_WITH_AS(choose_kernel_set("zen9", zen3, m.fn()),
                         doctest::Contains("CALA_BLAS_ARCH=zen9: not a kernel set of this BLIS"), cala::Error);
    CHECK_THROWS_WITH_AS(choose_kernel_set("Haswell", zen3, m.fn()), doctest::Contains("haswell, zen3"), cala::Error);
    CHECK_THROWS_WITH_AS(choose_kernel_set("skx", zen3, m.fn()), doctest::Contains("illegal instruction"), cala::Error);
}

TEST_CASE("kernel set names map to this BLIS's arch_t numbers") {
    CHECK(cala::kernels::kernel_set_id("skx") == BLIS_ARCH_SKX);
    CHECK(cala::kernels::kernel_set_id("haswell") == BLIS_ARCH_HASWELL);
    CHECK(cala::kernels::kernel_set_id("zen3") == BLIS_ARCH_ZEN3);
    CHECK(cala::kernels::kernel_set_id("generic") == BLIS_ARCH_GENERIC);
    CHECK(cala::kernels::kernel_set_id("auto") == -1);
    for (const auto& name : cala::kernels::kernel_set_names())
        CHECK(std::string(bli_arch_string(static_cast<arch_t>(cala::kernels::kernel_set_id(name)))) == name);
}

TEST_CASE("the FMA units from measured rates") {
    CHECK(cala::kernels::fma_units_512({40.0, 74.0}) == 2);
    CHECK(cala::kernels::fma_units_512({40.0, 40.0}) == 1);
    CHECK(cala::kernels::fma_units_512({40.0, 0.0}) == 1);
    CHECK(cala::kernels::fma_units_512({0.0, 0.0}) == 1);
}

TEST_CASE("this process: the choice made at load is the kernel set BLIS runs") {
    const auto& load = cala::kernels::load_choice();
    const CpuInfo cpu = cala::kernels::read_cpu_info();
    const std::string setting = std::getenv("CALA_BLAS_ARCH") ? std::getenv("CALA_BLAS_ARCH") : "auto";

    const std::string running = cala::blas_kernel_name();

    CHECK(load.error.empty());
    CHECK(load.choice.setting == setting);
    CHECK(running == bli_arch_string(bli_arch_query_id()));
    if (!load.choice.name.empty()) {
        CHECK(running == load.choice.name);
        CHECK(load.blis_arch_type == std::to_string(cala::kernels::kernel_set_id(running)));
    }
    if (cpu.has_avx2_fma()) CHECK(cala::kernels::fma_loop_gflops(256, 0.002) > 0);
}

TEST_CASE("child processes: auto overrides a poorer BLIS_ARCH_TYPE, keep keeps it, names are translated") {
    const CpuInfo cpu = cala::kernels::read_cpu_info();
    if (!cpu.has_avx2_fma()) return;  // the sets below need AVX (sandybridge) and AVX2 (auto)
    Mock measured{cpu.has_avx512_skx() ? cala::kernels::measure_fma_rates(cpu) : FmaRates{}};
    Mock one_unit{{50.0, 50.0}};
    const std::string avx2 = choose_kernel_set("auto", cpu, one_unit.fn()).name;
    seed_child_cache(measured.rates, {{"skx", 0.0}, {avx2, 0.0}});  // no probe: the FMA rule decides
    const std::string auto_name = choose_kernel_set("auto", cpu, measured.fn()).name;
    const std::string sandy = std::to_string(BLIS_ARCH_SANDYBRIDGE);

    CHECK(child("BLIS_ARCH_TYPE=" + sandy) == "kernels=" + auto_name + "\n");
    CHECK(child("BLIS_ARCH_TYPE=" + sandy + " CALA_BLAS_ARCH=auto") == "kernels=" + auto_name + "\n");
    CHECK(child("BLIS_ARCH_TYPE=" + sandy + " CALA_BLAS_ARCH=keep") == "kernels=sandybridge\n");
    CHECK(child("BLIS_ARCH_TYPE=sandybridge CALA_BLAS_ARCH=keep") == "kernels=sandybridge\n");
    CHECK(child("CALA_BLAS_ARCH=generic") == "kernels=generic\n");
    const std::string bad = child("CALA_BLAS_ARCH=bogus BLIS_ARCH_TYPE=" + sandy);
    CHECK(bad.find("cala: error: CALA_BLAS_ARCH=bogus: not a kernel set of this BLIS") != std::string::npos);
    CHECK(bad.find("refused=CALA_BLAS_ARCH=bogus") != std::string::npos);
    CHECK(bad.find("kernels=sandybridge") != std::string::npos);
    std::filesystem::remove_all(child_cache_dir());
}

TEST_CASE("child processes: on an AVX-512 CPU the cached DGEMM rates choose the set, either way") {
    const CpuInfo cpu = cala::kernels::read_cpu_info();
    if (!cpu.has_avx512_skx() || !cpu.has_avx2_fma()) return;  // the probe decides only there
    const FmaRates fma = cala::kernels::measure_fma_rates(cpu);
    Mock one_unit{{50.0, 50.0}};
    const std::string avx2 = choose_kernel_set("auto", cpu, one_unit.fn()).name;

    seed_child_cache(fma, {{"skx", 50.0}, {avx2, 40.0}});
    const std::string wide = child("");
    seed_child_cache(fma, {{"skx", 40.0}, {avx2, 50.0}});
    const std::string narrow = child("");
    const std::string forced = child("CALA_BLAS_ARCH=" + avx2);

    CHECK(wide == "kernels=skx\n");
    CHECK(narrow == "kernels=" + avx2 + "\n");
    CHECK(forced == "kernels=" + avx2 + "\n");
    std::filesystem::remove_all(child_cache_dir());
}

TEST_CASE("child processes: an empty cache on an AVX-512 CPU gets both sets' probed rates, and they choose") {
    const CpuInfo cpu = cala::kernels::read_cpu_info();
    if (!cpu.has_avx512_skx() || !cpu.has_avx2_fma()) return;  // auto probes only there
    Mock one_unit{{50.0, 50.0}};
    const std::string avx2 = choose_kernel_set("auto", cpu, one_unit.fn()).name;
    std::filesystem::remove_all(child_cache_dir());

    const std::string out = child("");

    setenv("CALA_CACHE_DIR", child_cache_dir().c_str(), 1);
    const double wide = std::atof(cala::kernels::machine_cache_get("dgemm_gflops_core_skx").c_str());
    const double narrow = std::atof(cala::kernels::machine_cache_get("dgemm_gflops_core_" + avx2).c_str());
    unsetenv("CALA_CACHE_DIR");
    CHECK(wide > 0);
    CHECK(narrow > 0);
    const bool tie = std::max(wide, narrow) <= 1.03 * std::min(wide, narrow);
    if (!tie) CHECK(out == "kernels=" + std::string(wide > narrow ? "skx" : avx2) + "\n");
    std::filesystem::remove_all(child_cache_dir());
}

TEST_CASE("the DGEMM probe: a rate in a child process for a set the CPU runs, 0 for none or no product") {
    const CpuInfo cpu = cala::kernels::read_cpu_info();
    Mock one_unit{{50.0, 50.0}};
    const std::string own = cpu.has_avx2_fma() ? choose_kernel_set("auto", cpu, one_unit.fn()).name : "generic";
    seed_child_cache(one_unit.rates, {{"skx", 0.0}, {own, 0.0}});  // the children's own load: no probe

    const std::string generic = child("CALA_TEST_PROBE=generic");
    const std::string native = child("CALA_TEST_PROBE=" + own);
    const std::string bogus = child("CALA_TEST_PROBE=zen9");
    const std::string illegal = cpu.has_avx512_skx() ? "probe=0\n" : child("CALA_TEST_PROBE=skx");

    REQUIRE(generic.rfind("probe=", 0) == 0);
    CHECK(std::atof(generic.c_str() + 6) > 0);
    REQUIRE(native.rfind("probe=", 0) == 0);
    CHECK(std::atof(native.c_str() + 6) > 0);
    CHECK(bogus == "probe=0\n");
    CHECK(illegal == "probe=0\n");  // skx without AVX-512: refused before any fork
    CHECK(cala::kernels::probe_gemm_gflops("generic", {0, 16, 16, 16, 2}) == 0);
    CHECK(cala::kernels::probe_gemm_gflops("generic", {16, 16, 16, 16, 0}) == 0);
    CHECK(cala::kernels::probe_gemm_gflops("generic", {16, 8, 16, 16, 2}) == 0);
    // A process of several threads does not fork (a lock held by another thread would stay held
    // in the child): 0, the FMA rule.
    CHECK(child("CALA_TEST_PROBE=generic CALA_TEST_PROBE_THREAD=1") == "probe=-1\n");
    std::filesystem::remove_all(child_cache_dir());
}

// A BLIS choice as select_kernels_at_load makes it on an AVX2 CPU.
cala::kernels::KernelChoice blis_choice(const std::string& name, const std::string& setting = "auto") {
    cala::kernels::KernelChoice k;
    k.name = name, k.setting = setting;
    return k;
}

// A measured OpenBLAS rate `g` that counts its calls in `asked`.
std::function<double()> counted_rate(int& asked, double g) {
    return [&asked, g] {
        ++asked;
        return g;
    };
}

TEST_CASE("CALA_BLAS: BLIS when its measured DGEMM is faster by more than 3%, else OpenBLAS (a tie too)") {
    using cala::kernels::choose_blas_library;
    int asked = 0;
    const auto rate = [&asked](double g) { return counted_rate(asked, g); };
    GemmMock blis{{{"zen3", 30.0}}};

    const auto faster = choose_blas_library("auto", blis_choice("zen3"), rate(36.0), blis.fn());
    const auto tie = choose_blas_library("", blis_choice("zen3"), rate(29.2), blis.fn());  // BLIS 2.7% faster
    const auto slower = choose_blas_library("auto", blis_choice("zen3"), rate(29.0), blis.fn());  // BLIS 3.4% faster

    CHECK(faster.openblas);
    CHECK(faster.setting == "auto");
    CHECK(faster.openblas_gflops == 36.0);
    CHECK(faster.blis_gflops == 30.0);
    CHECK(faster.reason.find("OpenBLAS, BLIS not faster by 3% (DGEMM OpenBLAS 36.0 GF/s, BLIS zen3 30.0") !=
          std::string::npos);
    CHECK(tie.openblas);
    CHECK(tie.reason.find("BLIS not faster by 3%") != std::string::npos);
    CHECK(!slower.openblas);
    CHECK(slower.reason.find("BLIS, the faster DGEMM measured (DGEMM OpenBLAS 29.0 GF/s, BLIS zen3 30.0") !=
          std::string::npos);
    CHECK(asked == 3);
    CHECK(blis.asked == std::vector<std::string>{"zen3", "zen3", "zen3"});
}

TEST_CASE("CALA_BLAS: no OpenBLAS, a failed probe, or BLIS kernels named by CALA_BLAS_ARCH keep BLIS") {
    using cala::kernels::choose_blas_library;
    int asked = 0;
    const auto rate = [&asked](double g) { return counted_rate(asked, g); };
    GemmMock blis{{{"zen3", 30.0}}}, failed{};

    const auto absent = choose_blas_library("auto", blis_choice("zen3"), rate(0.0), blis.fn());
    const auto blis_failed = choose_blas_library("auto", blis_choice("zen3"), rate(50.0), failed.fn());
    const auto named = choose_blas_library("auto", blis_choice("haswell", "haswell"), rate(50.0), blis.fn());
    const auto keep = choose_blas_library("auto", blis_choice("", "keep"), rate(50.0), blis.fn());

    CHECK(!absent.openblas);
    CHECK(absent.reason.find("no OpenBLAS") != std::string::npos);
    CHECK(blis.asked.empty());  // no OpenBLAS: BLIS's rate is not asked for
    CHECK(!blis_failed.openblas);
    CHECK(blis_failed.reason.find("probe failed") != std::string::npos);
    CHECK(!named.openblas);
    CHECK(named.reason.find("CALA_BLAS_ARCH=haswell") != std::string::npos);
    CHECK(!keep.openblas);
    CHECK(asked == 2);  // the named and kept BLIS kernels probe nothing
}

TEST_CASE("CALA_BLAS: blis and openblas force the library, anything else is a clear error") {
    using cala::kernels::choose_blas_library;
    bool asked = false;
    const auto never = [&asked] {
        asked = true;
        return 99.0;
    };
    GemmMock blis{{{"zen3", 30.0}}};

    CHECK(!choose_blas_library("blis", blis_choice("zen3"), never, blis.fn()).openblas);
    CHECK(choose_blas_library("openblas", blis_choice("zen3"), never, blis.fn()).openblas);
    CHECK(choose_blas_library("openblas", blis_choice("haswell", "haswell"), never, blis.fn()).openblas);
    CHECK(!asked);
    CHECK(blis.asked.empty());
    CHECK_THROWS_WITH_AS(choose_blas_library("OpenBLAS", blis_choice("zen3"), never, blis.fn()),
                         doctest::Contains("CALA_BLAS=OpenBLAS: not auto, blis or openblas"), cala::Error);
}

TEST_CASE("child processes: CALA_BLAS and the cached rates choose the library cala's kernels run on") {
    const CpuInfo cpu = cala::kernels::read_cpu_info();
    if (!cpu.has_avx2_fma()) return;  // auto compares the libraries on BLIS's AVX2 (or skx) kernels
    std::string why;
    const cala::kernels::OpenBlas* ob = cala::kernels::load_openblas(cala::kernels::openblas_path(), &why);
    INFO("OpenBLAS (scripts/setup installs libopenblas0-openmp): ", why);
    REQUIRE(ob != nullptr);
    Mock one_unit{{50.0, 50.0}};
    const FmaRates fma = cpu.has_avx512_skx() ? cala::kernels::measure_fma_rates(cpu) : FmaRates{};
    // The children's own BLIS choice, from the same cached rates (skx and the AVX2 set tied: FMA rule).
    seed_child_cache(fma, {{"skx", 0.0}, {choose_kernel_set("auto", cpu, one_unit.fn()).name, 0.0}});
    std::string set = child("");  // "kernels=<set>\n"
    REQUIRE(set.rfind("kernels=", 0) == 0);
    set = set.substr(8, set.size() - 9);
    const auto keys = cala::kernels::library_probe_keys(set, cala::kernels::openblas_path());
    const std::string beside = keys[0].substr(18), key = keys[1].substr(18);  // past "dgemm_gflops_core_"
    const std::string openblas = "library=openblas " + ob->core + "\n", blis = "library=blis " + set + "\n";

    seed_child_cache(fma, {{set, 10.0}, {beside, 30.0}, {key, 40.0}});  // the pair decides, not the set's own probe
    const std::string fast = child("CALA_TEST_PRINT_LIBRARY=1");
    const std::string forced_blis = child("CALA_TEST_PRINT_LIBRARY=1 CALA_BLAS=blis");
    const std::string named = child("CALA_TEST_PRINT_LIBRARY=1 CALA_BLAS_ARCH=" + set);
    seed_child_cache(fma, {{set, 10.0}, {beside, 30.0}, {key, 29.5}});
    const std::string tie = child("CALA_TEST_PRINT_LIBRARY=1");  // BLIS within 3%: OpenBLAS
    seed_child_cache(fma, {{set, 10.0}, {beside, 30.0}, {key, 25.0}});
    const std::string slow = child("CALA_TEST_PRINT_LIBRARY=1");  // BLIS faster by 20%
    const std::string forced = child("CALA_TEST_PRINT_LIBRARY=1 CALA_BLAS=openblas");
    const std::string missing = child("CALA_TEST_PRINT_LIBRARY=1 CALA_BLAS=openblas CALA_OPENBLAS=/nonexistent/libx.so");
    const std::string missing_auto = child("CALA_TEST_PRINT_LIBRARY=1 CALA_OPENBLAS=/nonexistent/libx.so");
    const std::string bad = child("CALA_TEST_PRINT_LIBRARY=1 CALA_BLAS=mkl");

    CHECK(fast == openblas);
    CHECK(forced_blis == blis);
    CHECK(named == blis);
    CHECK(tie == openblas);
    CHECK(slow == blis);
    CHECK(forced == openblas);
    CHECK(missing.find("cala: error: CALA_BLAS=openblas: /nonexistent/libx.so did not load") != std::string::npos);
    CHECK(missing.find("refused=CALA_BLAS=openblas") != std::string::npos);
    CHECK(missing.find(" library=blis\n") != std::string::npos);
    CHECK(missing_auto == blis);  // probed in a child (0: not there), no error
    CHECK(bad.find("cala: error: CALA_BLAS=mkl: not auto, blis or openblas; BLIS runs") != std::string::npos);
    CHECK(bad.find(" library=blis\n") != std::string::npos);
    std::filesystem::remove_all(child_cache_dir());
}

TEST_CASE("the OpenBLAS probe: a rate in a child process, 0 for a library that is not there or no product") {
    const std::string path = cala::kernels::openblas_path();
    REQUIRE(cala::kernels::load_openblas(path) != nullptr);
    Mock one_unit{{50.0, 50.0}};
    const CpuInfo cpu = cala::kernels::read_cpu_info();
    const std::string own = cpu.has_avx2_fma() ? choose_kernel_set("auto", cpu, one_unit.fn()).name : "generic";
    const auto keys = cala::kernels::library_probe_keys(own, path);
    seed_child_cache(one_unit.rates, {{"skx", 0.0}, {own, 0.0}, {keys[0].substr(18), 0.0}, {keys[1].substr(18), 0.0}});

    const std::string here = child("CALA_TEST_PROBE=openblas:" + path);
    const std::string pair = child("CALA_TEST_PROBE=pair:" + own + ":" + path);
    const std::string pair_absent = child("CALA_TEST_PROBE=pair:" + own + ":/nonexistent/libx.so");
    const std::string pair_bogus = child("CALA_TEST_PROBE=pair:zen9:" + path);
    const std::string absent = child("CALA_TEST_PROBE=openblas:/nonexistent/libx.so");
    const std::string not_openblas = child("CALA_TEST_PROBE=openblas:libc.so.6");  // loads, but is no OpenBLAS
    const std::string threaded = child("CALA_TEST_PROBE=openblas:" + path + " CALA_TEST_PROBE_THREAD=1");

    REQUIRE(here.rfind("probe=", 0) == 0);
    CHECK(std::atof(here.c_str() + 6) > 0);
    CHECK(absent == "probe=0\n");
    CHECK(not_openblas == "probe=0\n");
    CHECK(threaded == "probe=-1\n");
    // Together: both rates from one child; a library that is not there, or a set that is not, gives
    // 0 for that one and the other's rate still.
    const auto rates = [](const std::string& out) {
        REQUIRE(out.rfind("probe=", 0) == 0);
        const auto comma = out.find(',');
        REQUIRE(comma != std::string::npos);
        return std::pair{std::atof(out.c_str() + 6), std::atof(out.c_str() + comma + 1)};
    };
    CHECK(rates(pair).first > 0);
    CHECK(rates(pair).second > 0);
    CHECK(rates(pair_absent).first > 0);
    CHECK(rates(pair_absent).second == 0);
    CHECK(rates(pair_bogus).first == 0);
    CHECK(rates(pair_bogus).second > 0);
    CHECK(cala::kernels::probe_openblas_gflops(path, {16, 8, 16, 16, 2}) == 0);
    CHECK(cala::kernels::probe_openblas_gflops("", {}) == 0);
    std::string why;
    CHECK(cala::kernels::load_openblas("libc.so.6", &why) == nullptr);
    CHECK(why.find("has no openblas_get_config: not an OpenBLAS") != std::string::npos);
    std::filesystem::remove_all(child_cache_dir());
}

TEST_CASE("the machine cache keeps values per CPU") {
    const std::string dir = "/tmp/cala-test-blas-arch-cache-" + std::to_string(getpid());
    setenv("CALA_CACHE_DIR", dir.c_str(), 1);

    cala::kernels::machine_cache_put({{"fma256_gflops_core", "12.5"}, {"note", "a"}});
    cala::kernels::machine_cache_put({{"note", "b"}});

    const std::string path = cala::kernels::machine_cache_path();
    CHECK(path.rfind(dir + "/machine-", 0) == 0);
    CHECK(cala::kernels::machine_cache_get("fma256_gflops_core") == "12.5");
    CHECK(cala::kernels::machine_cache_get("note") == "b");
    CHECK(cala::kernels::machine_cache_get("absent").empty());
    std::remove(path.c_str());
    rmdir(dir.c_str());
    unsetenv("CALA_CACHE_DIR");
}

TEST_CASE("OpenBLAS's core: kernels without AVX2 on a CPU with AVX2 get the core the CPU runs") {
    using cala::kernels::openblas_core_advice;
    const CpuInfo skx = avx512_cpu(CpuInfo::Vendor::Intel, 6, 207), hsw = avx2_cpu(CpuInfo::Vendor::Intel, 6, 63);
    const CpuInfo zen3 = avx2_cpu(CpuInfo::Vendor::Amd, 25, 1), zen4 = avx512_cpu(CpuInfo::Vendor::Amd, 25, 17);
    CpuInfo old = hsw;
    old.avx2 = false;  // Sandy Bridge: AVX, no AVX2
    // Debian's OpenBLAS 0.3.21 on an Emerald Rapids Xeon (family 6 model 207): Prescott.
    CHECK(openblas_core_advice("Prescott", skx) == "SkylakeX");
    CHECK(openblas_core_advice("prescott", skx) == "SkylakeX");
    CHECK(openblas_core_advice("Nehalem", hsw) == "Haswell");
    CHECK(openblas_core_advice("Sandybridge", zen3) == "Zen");
    CHECK(openblas_core_advice("Core2", zen4) == "SkylakeX");
    CHECK(openblas_core_advice("Barcelona", zen3) == "Zen");
    // A core with AVX2 (or one OpenBLAS may name that this list does not know) stays.
    for (const char* fine : {"Haswell", "Zen", "SkylakeX", "Cooperlake", "SapphireRapids", "Unknown", ""}) {
        CAPTURE(fine);
        CHECK(openblas_core_advice(fine, skx).empty());
        CHECK(openblas_core_advice(fine, zen3).empty());
    }
    // A CPU without AVX2 and FMA: OpenBLAS's own choice is as good as any.
    CHECK(openblas_core_advice("Prescott", old).empty());
    CHECK(openblas_core_advice("Sandybridge", old).empty());
}

TEST_CASE("OpenBLAS's core: never left on kernels without AVX2 silently; CALA_OPENBLAS_CORETYPE forces or keeps") {
    const CpuInfo cpu = cala::kernels::read_cpu_info();
    std::string why;
    const cala::kernels::OpenBlas* ob = cala::kernels::load_openblas(cala::kernels::openblas_path(), &why);
    INFO("OpenBLAS (scripts/setup installs libopenblas0-openmp): ", why);
    REQUIRE(ob != nullptr);
    CAPTURE(ob->core);
    CAPTURE(ob->own_core);
    CAPTURE(ob->advice);
    // Here: either on kernels the CPU should run, or the fix is named (a user's OPENBLAS_CORETYPE).
    CHECK((cala::kernels::openblas_core_advice(ob->core, cpu).empty() || !ob->advice.empty()));
    // Where cala chose the core, it is the advice for the one OpenBLAS picked, or the AVX-512 core
    // measured faster than its AVX2 one.
    if (!ob->own_core.empty() && std::getenv("CALA_OPENBLAS_CORETYPE") == nullptr)
        CHECK((cala::kernels::openblas_core_advice(ob->own_core, cpu) == ob->core ||
               (!ob->core_rates.empty() && cala::kernels::openblas_core_candidate(ob->own_core, cpu) == ob->core)));
    // A core measured against a candidate (AVX2 kernels on an AVX-512 CPU; Zen 4 and Zen 5 with
    // Debian's OpenBLAS): the children's cache gets rates that make the same decision.
    if (!ob->core_rates.empty()) {
        const std::string measured_own = ob->own_core.empty() ? ob->core : ob->own_core;
        const auto keys = cala::kernels::openblas_core_keys(cala::kernels::openblas_path(), measured_own,
                                                             cala::kernels::openblas_core_candidate(measured_own, cpu));
        seed_child_cache({50.0, 50.0}, {{keys[0].substr(18), 50.0}, {keys[1].substr(18), ob->own_core.empty() ? 50.0 : 90.0}});
    }
    if (!cpu.has_avx2_fma()) return;
    // Children with CALA_BLAS=openblas: a forced core (Haswell runs on any CPU with AVX2 and FMA),
    // OpenBLAS's own (keep), and the user's OPENBLAS_CORETYPE, which cala leaves alone.
    const std::string own = ob->own_core.empty() ? ob->core : ob->own_core;
    const std::string forced = child("CALA_TEST_PRINT_LIBRARY=1 CALA_BLAS=openblas CALA_OPENBLAS_CORETYPE=Haswell");
    const std::string keep = child("CALA_TEST_PRINT_LIBRARY=1 CALA_BLAS=openblas CALA_OPENBLAS_CORETYPE=keep");
    const std::string user = child("CALA_TEST_PRINT_LIBRARY=1 CALA_BLAS=openblas OPENBLAS_CORETYPE=Haswell");
    const std::string automatic = child("CALA_TEST_PRINT_LIBRARY=1 CALA_BLAS=openblas");
    CHECK(forced == "library=openblas Haswell\n");
    CHECK(keep == "library=openblas " + own + "\n");
    CHECK(user == "library=openblas Haswell\n");
    CHECK(automatic == "library=openblas " + ob->core + "\n");
    std::filesystem::remove_all(child_cache_dir());
}

TEST_CASE("OpenBLAS's core: AVX2 kernels on an AVX-512 CPU are measured against SkylakeX, which runs if faster by 3%") {
    using cala::kernels::openblas_candidate_wins;
    using cala::kernels::openblas_core_candidate;
    const CpuInfo skx = avx512_cpu(CpuInfo::Vendor::Intel, 6, 207), hsw = avx2_cpu(CpuInfo::Vendor::Intel, 6, 63);
    const CpuInfo zen3 = avx2_cpu(CpuInfo::Vendor::Amd, 25, 1), zen5 = avx512_cpu(CpuInfo::Vendor::Amd, 26, 2);
    // Debian's OpenBLAS 0.3.21 on a Zen 5 (it knows no Zen 4 or 5): Zen, AVX2.
    CHECK(openblas_core_candidate("Zen", zen5) == "SkylakeX");
    CHECK(openblas_core_candidate("zen", zen5) == "SkylakeX");
    CHECK(openblas_core_candidate("Haswell", skx) == "SkylakeX");
    // No AVX-512 on the CPU, a core with AVX-512 already, or one without AVX2 (the advice's case).
    for (const char* core : {"Zen", "Haswell"}) {
        CHECK(openblas_core_candidate(core, zen3).empty());
        CHECK(openblas_core_candidate(core, hsw).empty());
    }
    for (const char* core : {"SkylakeX", "Cooperlake", "SapphireRapids", "Prescott", "Sandybridge", ""}) {
        CAPTURE(core);
        CHECK(openblas_core_candidate(core, skx).empty());
    }
    // The rule: faster by more than 3%; a failed measurement (0) decides nothing.
    CHECK(openblas_candidate_wins(53.0, 93.0));
    CHECK(openblas_candidate_wins(50.0, 51.6));
    CHECK_FALSE(openblas_candidate_wins(50.0, 51.4));
    CHECK_FALSE(openblas_candidate_wins(50.0, 45.0));
    CHECK_FALSE(openblas_candidate_wins(0.0, 90.0));
    CHECK_FALSE(openblas_candidate_wins(50.0, 0.0));
    const auto k = cala::kernels::openblas_core_keys("libopenblas.so.0", "Zen", "SkylakeX");
    CHECK(k[0] != k[1]);
    CHECK(k[0].rfind("dgemm_gflops_core_openblas_", 0) == 0);
    CHECK(k[1].size() - k[1].rfind("_SkylakeX") == 9);

    // The probe (a child of a child: the test binary with CALA_TEST_PROBE), and the switch.
    const CpuInfo cpu = cala::kernels::read_cpu_info();
    if (!cpu.has_avx2_fma()) return;
    const std::string path = cala::kernels::openblas_path();
    REQUIRE(cala::kernels::load_openblas(path) != nullptr);
    const std::string second = cpu.has_avx512_skx() ? "SkylakeX" : "Haswell";
    const std::string both = child("CALA_TEST_PROBE=cores:Haswell:" + second + ":" + path);
    const std::string bogus = child("CALA_TEST_PROBE=cores:Haswell:Zen9:" + path);
    const std::string absent = child("CALA_TEST_PROBE=cores:Haswell:SkylakeX:/nonexistent/libx.so");
    const std::string threaded = child("CALA_TEST_PROBE=cores:Haswell:SkylakeX:" + path + " CALA_TEST_PROBE_THREAD=1");
    const auto rates = [](const std::string& out) {
        REQUIRE(out.rfind("probe=", 0) == 0);
        const auto comma = out.find(',');
        REQUIRE(comma != std::string::npos);
        return std::pair{std::atof(out.c_str() + 6), std::atof(out.c_str() + comma + 1)};
    };
    CAPTURE(both);
    CHECK(rates(both).first > 0);
    CHECK(rates(both).second > 0);
    CHECK(rates(bogus).first > 0);
    CHECK(rates(bogus).second == 0);  // OpenBLAS does not know it: no rate
    CHECK(absent == "probe=0,0\n");
    CHECK(threaded == "probe=-1,-1\n");
    CHECK(cala::kernels::probe_openblas_cores_gflops(path, {"Haswell", "Zen"}, {16, 8, 16, 16, 2})[0] == 0);
    const std::string to_haswell = child("CALA_TEST_SWITCH=Haswell");
    const std::string to_bogus = child("CALA_TEST_SWITCH=Zen9");
    CHECK(to_haswell.rfind("switched=1 ", 0) == 0);
    CHECK(to_haswell.find(" core=Haswell rates=test rates\n") != std::string::npos);
    CHECK(to_bogus.rfind("switched=0 ", 0) == 0);
    const auto before = to_bogus.substr(to_bogus.find("before=") + 7, to_bogus.find(' ', to_bogus.find("before=")) - to_bogus.find("before=") - 7);
    CHECK(to_bogus.find(" core=" + before + " ") != std::string::npos);  // the core it ran, kept
    std::filesystem::remove_all(child_cache_dir());
}
