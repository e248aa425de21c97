// Utility layers: C semantics, debugging, threads, profiling, tracing.
#pragma once
#include "strata/layers/heap.hpp"
#include "strata/layers/utility/ansi_wrapper.hpp"
#include "strata/layers/utility/debug_heap.hpp"
#include "strata/layers/utility/locked_heap.hpp"
#include "strata/layers/utility/per_class_heap.hpp"
#include "strata/layers/utility/pho_thread_heap.hpp"
#include "strata/layers/utility/profile_heap.hpp"
#include "strata/layers/utility/thread_heap.hpp"
#include "strata/layers/utility/throw_exception_heap.hpp"
#include "strata/layers/utility/trace_heap.hpp"
#include "strata/layers/utility/unique_heap.hpp"
