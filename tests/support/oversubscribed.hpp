#pragma once

namespace cala::test {

/// Whether this rank's blocking MPI calls yield the core while they wait (tests/support/
/// oversubscribed.cpp): CALA_TEST_YIELD, else more ranks in the world than cores to run on.
bool yield_in_waits();

}  // namespace cala::test
