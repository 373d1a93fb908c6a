#pragma once
// Everything public in cala.

#include "cala/cholesky.hpp"
#include "cala/comm.hpp"
#include "cala/error.hpp"
#include "cala/gemm.hpp"
#include "cala/grid.hpp"
#include "cala/grid3d.hpp"
#include "cala/layout.hpp"
#include "cala/matrix.hpp"
#include "cala/memory.hpp"
#include "cala/model.hpp"
#include "cala/mw.hpp"
#include "cala/node.hpp"
#include "cala/runtime.hpp"
#include "cala/stencil.hpp"
#include "cala/types.hpp"
