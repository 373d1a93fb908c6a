// The CPU's features (CPUID) and the choice of BLIS kernel set from them and the FMA rates.

#include "kernels/arch.hpp"

#include <blis.h>
#include <cpuid.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <iterator>

#include "core/check.hpp"

namespace cala::kernels {

namespace {

// The x86-64 kernel sets of BLIS 0.9 (the ones this build has) and the instructions each needs.
struct KernelSet {
    const char* name;
    arch_t id;
    bool (*runs_on)(const CpuInfo&);
};

const std::vector<KernelSet>& kernel_sets() {
    static const std::vector<KernelSet> sets = {
#ifdef BLIS_CONFIG_SKX
        {"skx", BLIS_ARCH_SKX, [](const CpuInfo& c) { return c.has_avx512_skx(); }},
#endif
#ifdef BLIS_CONFIG_KNL
        {"knl", BLIS_ARCH_KNL, [](const CpuInfo& c) { return c.avx512f && c.avx512cd && c.avx512er; }},
#endif
#ifdef BLIS_CONFIG_HASWELL
        {"haswell", BLIS_ARCH_HASWELL, [](const CpuInfo& c) { return c.has_avx2_fma(); }},
#endif
#ifdef BLIS_CONFIG_ZEN3
        {"zen3", BLIS_ARCH_ZEN3, [](const CpuInfo& c) { return c.has_avx2_fma(); }},
#endif
#ifdef BLIS_CONFIG_ZEN2
        {"zen2", BLIS_ARCH_ZEN2, [](const CpuInfo& c) { return c.has_avx2_fma(); }},
#endif
#ifdef BLIS_CONFIG_ZEN
        {"zen", BLIS_ARCH_ZEN, [](const CpuInfo& c) { return c.has_avx2_fma(); }},
#endif
#ifdef BLIS_CONFIG_EXCAVATOR
        {"excavator", BLIS_ARCH_EXCAVATOR, [](const CpuInfo& c) { return c.has_avx2_fma(); }},
#endif
#ifdef BLIS_CONFIG_STEAMROLLER
        {"steamroller", BLIS_ARCH_STEAMROLLER, [](const CpuInfo& c) { return c.avx && c.fma3; }},
#endif
#ifdef BLIS_CONFIG_PILEDRIVER
        {"piledriver", BLIS_ARCH_PILEDRIVER, [](const CpuInfo& c) { return c.avx && c.fma3; }},
#endif
#ifdef BLIS_CONFIG_BULLDOZER
        {"bulldozer", BLIS_ARCH_BULLDOZER, [](const CpuInfo& c) { return c.avx && c.fma4; }},
#endif
#ifdef BLIS_CONFIG_SANDYBRIDGE
        {"sandybridge", BLIS_ARCH_SANDYBRIDGE, [](const CpuInfo& c) { return c.avx; }},
#endif
#ifdef BLIS_CONFIG_PENRYN
        {"penryn", BLIS_ARCH_PENRYN, [](const CpuInfo& c) { return c.ssse3; }},
#endif
        {"generic", BLIS_ARCH_GENERIC, [](const CpuInfo&) { return true; }},
    };
    return sets;
}

const KernelSet* find_set(const std::string& name) {
    for (const auto& s : kernel_sets())
        if (name == s.name) return &s;
    return nullptr;
}

std::string list_names() {
    std::string all = "auto, keep";
    for (const auto& s : kernel_sets()) all += std::string(", ") + s.name;
    return all;
}

// The AVX2 kernel set BLIS has for this vendor and family (AMD: Zen 1, 2, 3; Zen 4 and 5 run
// zen3's kernels, which BLIS 0.9 would not pick for them).
std::string avx2_set(const CpuInfo& c) {
    if (c.vendor == CpuInfo::Vendor::Amd && c.family >= 0x17) {
        if (c.family >= 0x19 && find_set("zen3")) return "zen3";
        if (c.family == 0x17 && c.model >= 0x30 && find_set("zen2")) return "zen2";
        if (find_set("zen")) return "zen";
    }
    return "haswell";
}

std::string fmt_rate(double g) {
    char b[32];
    std::snprintf(b, sizeof b, "%.1f", g);
    return b;
}

}  // namespace

CpuInfo read_cpu_info() {
    CpuInfo c;
    unsigned a = 0, b = 0, cx = 0, d = 0;
    if (__get_cpuid(0, &a, &b, &cx, &d) == 0) return c;
    const unsigned max_leaf = a;
    char vendor[13] = {};
    std::memcpy(vendor, &b, 4), std::memcpy(vendor + 4, &d, 4), std::memcpy(vendor + 8, &cx, 4);
    c.vendor = std::strcmp(vendor, "GenuineIntel") == 0   ? CpuInfo::Vendor::Intel
               : std::strcmp(vendor, "AuthenticAMD") == 0 ? CpuInfo::Vendor::Amd
                                                          : CpuInfo::Vendor::Other;
    __get_cpuid(1, &a, &b, &cx, &d);
    const unsigned base_family = (a >> 8) & 0xf, base_model = (a >> 4) & 0xf;
    c.family = base_family == 0xf ? base_family + ((a >> 20) & 0xff) : base_family;
    c.model = base_family == 0x6 || base_family == 0xf ? base_model + (((a >> 16) & 0xf) << 4) : base_model;
    c.ssse3 = cx & (1u << 9);
    c.fma3 = cx & (1u << 12);
    const bool osxsave = cx & (1u << 27), avx_bit = cx & (1u << 28);
    unsigned long long xcr0 = 0;
    if (osxsave) {
        unsigned lo = 0, hi = 0;
        __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
        xcr0 = (static_cast<unsigned long long>(hi) << 32) | lo;
    }
    const bool ymm_saved = (xcr0 & 0x6) == 0x6, zmm_saved = (xcr0 & 0xe6) == 0xe6;
    c.avx = avx_bit && ymm_saved;
    c.fma3 = c.fma3 && c.avx;
    if (max_leaf >= 7) {
        __get_cpuid_count(7, 0, &a, &b, &cx, &d);
        c.avx2 = c.avx && (b & (1u << 5));
        c.avx512f = zmm_saved && (b & (1u << 16));
        c.avx512dq = c.avx512f && (b & (1u << 17));
        c.avx512er = c.avx512f && (b & (1u << 27));
        c.avx512cd = c.avx512f && (b & (1u << 28));
        c.avx512bw = c.avx512f && (b & (1u << 30));
        c.avx512vl = c.avx512f && (b & (1u << 31));
    }
    if (__get_cpuid(0x80000000, &a, &b, &cx, &d) && a >= 0x80000001) {
        const unsigned max_ext = a;
        __get_cpuid(0x80000001, &a, &b, &cx, &d);
        c.fma4 = c.avx && (cx & (1u << 16));
        if (max_ext >= 0x80000004) {
            unsigned r[12];
            for (unsigned i = 0; i < 3; ++i) __get_cpuid(0x80000002 + i, &r[4 * i], &r[4 * i + 1], &r[4 * i + 2], &r[4 * i + 3]);
            char s[49] = {};
            std::memcpy(s, r, 48);
            c.brand = s;
            const auto first = c.brand.find_first_not_of(' ');
            c.brand = first == std::string::npos ? "" : c.brand.substr(first);
        }
    }
    return c;
}

int fma_units_512(const FmaRates& r) { return r.gflops_256 > 0 && r.gflops_512 >= 1.4 * r.gflops_256 ? 2 : 1; }

std::vector<std::string> kernel_set_names() {
    std::vector<std::string> v;
    for (const auto& s : kernel_sets()) v.emplace_back(s.name);
    return v;
}

bool kernel_set_runs_on(const std::string& name, const CpuInfo& cpu) {
    const KernelSet* s = find_set(name);
    return s != nullptr && s->runs_on(cpu);
}

int kernel_set_id(const std::string& name) {
    const KernelSet* s = find_set(name);
    return s ? static_cast<int>(s->id) : -1;
}

KernelChoice choose_kernel_set(const std::string& setting, const CpuInfo& cpu,
                               const std::function<FmaRates()>& rates, const GemmRateFn& gemm_rate) {
    KernelChoice k;
    k.setting = setting.empty() ? "auto" : setting;
    if (k.setting == "keep") {
        k.reason = "CALA_BLAS_ARCH=keep: BLIS's own choice";
        return k;
    }
    if (k.setting != "auto") {
        const KernelSet* s = find_set(k.setting);
        if (s == nullptr)
            throw Error(detail::cat("CALA_BLAS_ARCH=", k.setting, ": not a kernel set of this BLIS (", list_names(), ")"));
        if (!s->runs_on(cpu))
            throw Error(detail::cat("CALA_BLAS_ARCH=", k.setting, ": this CPU (", cpu.brand.empty() ? "?" : cpu.brand,
                                    ") lacks the instructions of BLIS's ", s->name, " kernels (",
                                    k.setting == "skx" ? "AVX-512 F, DQ, CD, BW and VL" : "AVX/AVX2/FMA",
                                    "); they would stop the program with an illegal instruction"));
        k.name = s->name;
        k.reason = "forced by CALA_BLAS_ARCH";
        return k;
    }
    if (cpu.avx512er) {  // Xeon Phi: BLIS knows it
        k.reason = "Xeon Phi (AVX-512 ER): BLIS's own choice";
        return k;
    }
    if (cpu.has_avx512_skx() && find_set("skx")) {
        k.rates = rates();
        const std::string measured = "512-bit FMAs " + fmt_rate(k.rates.gflops_512) + " GF/s, 256-bit " +
                                     fmt_rate(k.rates.gflops_256) + " GF/s per core";
        const std::string avx2 = cpu.has_avx2_fma() ? avx2_set(cpu) : "";
        std::string probe_note;
        if (gemm_rate && !avx2.empty()) {
            k.gemm = {{"skx", gemm_rate("skx")}, {avx2, gemm_rate(avx2)}};
            const double wide = k.gemm[0].gflops, narrow = k.gemm[1].gflops;
            const std::string rates_text = "DGEMM skx " + fmt_rate(wide) + " GF/s, " + avx2 + " " + fmt_rate(narrow) +
                                           " GF/s a core; " + measured;
            if (wide > 0 && narrow > 0 && std::max(wide, narrow) > 1.03 * std::min(wide, narrow)) {
                k.name = wide > narrow ? "skx" : avx2;
                k.reason = "AVX-512, the faster DGEMM measured (" + rates_text + ")";
                return k;
            }
            probe_note = wide > 0 && narrow > 0 ? "; DGEMM within 3% (" + rates_text + ")" : "; DGEMM probe failed";
        }
        if (fma_units_512(k.rates) == 2) {
            k.name = "skx";
            k.reason = "AVX-512 with two 512-bit FMA units (" + measured + ")" + probe_note;
            return k;
        }
        k.name = avx2;
        k.reason = "AVX-512 with one 512-bit FMA unit (" + measured + "): the AVX2 kernels" + probe_note;
        return k;
    }
    if (cpu.has_avx2_fma()) {
        k.name = avx2_set(cpu);
        k.reason = "AVX2 and FMA, no usable AVX-512";
        return k;
    }
    k.reason = "no AVX2: BLIS's own choice";
    return k;
}

std::string openblas_core_advice(const std::string& core, const CpuInfo& cpu) {
    if (!cpu.has_avx2_fma()) return {};
    std::string c;
    for (const char ch : core) c += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    // OpenBLAS's x86-64 cores that predate AVX2 (its dynamic list and the generic fallbacks).
    static const char* const older[] = {"prescott",   "core2",      "penryn",   "dunnington", "nehalem",
                                        "sandybridge", "atom",       "barcelona", "bobcat",     "bulldozer",
                                        "piledriver", "steamroller", "excavator", "opteron",    "opteron_sse3",
                                        "katmai",     "coppermine", "northwood", "banias",     "athlon",
                                        "nano",       "generic"};
    if (std::find(std::begin(older), std::end(older), c) == std::end(older)) return {};
    return cpu.has_avx512_skx() ? "SkylakeX" : cpu.vendor == CpuInfo::Vendor::Amd ? "Zen" : "Haswell";
}

std::string openblas_core_candidate(const std::string& core, const CpuInfo& cpu) {
    if (!cpu.has_avx512_skx()) return {};
    std::string c;
    for (const char ch : core) c += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    return c == "haswell" || c == "zen" ? "SkylakeX" : "";
}

bool openblas_candidate_wins(double own_gflops, double candidate_gflops) {
    return own_gflops > 0 && candidate_gflops > 1.03 * own_gflops;
}

LibraryChoice choose_blas_library(const std::string& setting, const KernelChoice& kernels,
                                  const std::function<double()>& openblas_rate, const GemmRateFn& blis_rate) {
    LibraryChoice l;
    l.setting = setting.empty() ? "auto" : setting;
    if (l.setting == "blis") {
        l.reason = "CALA_BLAS=blis";
        return l;
    }
    if (l.setting == "openblas") {
        l.openblas = true;
        l.reason = "CALA_BLAS=openblas";
        return l;
    }
    if (l.setting != "auto") throw Error(detail::cat("CALA_BLAS=", l.setting, ": not auto, blis or openblas"));
    if (kernels.setting != "auto" || kernels.name.empty()) {
        l.reason = kernels.name.empty() ? "BLIS (its own kernel choice: no probe)"
                                        : "BLIS (CALA_BLAS_ARCH=" + kernels.setting + " names its kernels)";
        return l;
    }
    l.openblas_gflops = openblas_rate ? openblas_rate() : 0;
    if (l.openblas_gflops <= 0) {
        l.reason = "BLIS (no OpenBLAS to compare)";
        return l;
    }
    l.blis_gflops = blis_rate ? blis_rate(kernels.name) : 0;
    const std::string rates = "DGEMM OpenBLAS " + fmt_rate(l.openblas_gflops) + " GF/s, BLIS " + kernels.name + " " +
                              fmt_rate(l.blis_gflops) + " GF/s a core";
    if (l.blis_gflops <= 0) {
        l.reason = "BLIS (its probe failed; " + rates + ")";
        return l;
    }
    // A tie goes to OpenBLAS: where the probe's two products came out within 3%, OpenBLAS ran cala's
    // whole commands as fast or faster on every kind measured (its narrow panel updates 1.2-1.4x;
    // docs/performance.md, stops 51 and 52). BLIS runs where it is measured faster.
    l.openblas = !(l.blis_gflops > 1.03 * l.openblas_gflops);
    l.reason = (l.openblas ? "OpenBLAS, BLIS not faster by 3% (" : "BLIS, the faster DGEMM measured (") + rates + ")";
    return l;
}

}  // namespace cala::kernels
