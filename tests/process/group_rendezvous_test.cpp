// A multi-worker group's shared-memory rendezvous (offer_group_rendezvous): slots for large
// packs' pieces where shared memory holds them, slots for the small packs alone where it does
// not, none (and the ring) where not even those fit. The shortage is made real: a child process
// whose file size limit (RLIMIT_FSIZE, which the segment's reservation obeys) is below the
// segment's size.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "coordinator/cluster/small_collective_rendezvous.hpp"

namespace troupe {
namespace {

constexpr size_t kSmall = size_t(64) << 10, kPiece = size_t(1) << 20;

struct Offer {
  int code = -1;  // 0: none, else (its slot's bytes / 64 KiB) * 10 + its depth
  std::string log;
};

// offer_group_rendezvous(2, 64 KiB, 1 MiB) in a child whose files may grow to `limit` bytes.
Offer offer_under_file_limit(rlim_t limit) {
  const std::string log =
      (std::filesystem::temp_directory_path() / ("group-rdv-" + std::to_string(::getpid())))
          .string();
  const pid_t child = ::fork();
  if (child == 0) {
    std::freopen(log.c_str(), "w", stderr);
    ::signal(SIGXFSZ, SIG_IGN);  // a write past the limit fails with EFBIG instead
    rlimit r{limit, limit};
    ::setrlimit(RLIMIT_FSIZE, &r);
    auto offered = offer_group_rendezvous(2, kSmall, kPiece);
    std::fflush(stderr);
    if (offered) offered->unlink();  // _exit runs no destructor
    ::_exit(offered ? int(offered->slot_bytes() / kSmall) * 10 + offered->depth() : 0);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  Offer out;
  out.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream in(log);
  out.log.assign(std::istreambuf_iterator<char>(in), {});
  std::filesystem::remove(log);
  return out;
}

TEST(GroupRendezvous, HoldsLargePiecesWhereSharedMemoryHasRoom) {
  auto offered = offer_group_rendezvous(2, kSmall, kPiece);
  ASSERT_TRUE(offered);
  EXPECT_EQ(offered->slot_bytes(), kPiece);
  EXPECT_EQ(offered->depth(), kLargeAllReduceDepth);
  offered->unlink();
}

TEST(GroupRendezvous, KeepsTheSmallPacksWhenTheLargeSlotsDoNotFit) {
  // 2 ranks x 4 slots of 1 MiB do not fit in 1 MiB; 2 x 2 slots of 64 KiB do.
  const Offer offer = offer_under_file_limit(rlim_t(1) << 20);
  EXPECT_EQ(offer.code, 1 * 10 + 2) << offer.log;  // 64 KiB slots, depth 2
  EXPECT_NE(offer.log.find("troupe: large all-reduces go in pieces of 65536 bytes: cannot "
                           "reserve "),
            std::string::npos)
      << offer.log;
}

TEST(GroupRendezvous, OffersNoneWhenNotEvenTheSmallSlotsFitAndSaysSo) {
  const Offer offer = offer_under_file_limit(rlim_t(64) << 10);
  EXPECT_EQ(offer.code, 0) << offer.log;
  EXPECT_NE(offer.log.find("troupe: small all-reduces take the ring: cannot reserve "),
            std::string::npos)
      << offer.log;
}

}  // namespace
}  // namespace troupe
