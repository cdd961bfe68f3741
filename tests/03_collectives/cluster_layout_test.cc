// Scaffolding: the layout tools/cluster/cluster.sh hands its processes (cluster.h), read from the
// environment: parsed, checked against the world's size, refused outside the cluster.
#include "chapters/03_collectives/cluster.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "common/testing/expect_error.h"

namespace book::coll {
namespace {

using testing::expect_error;

class ClusterLayoutTest : public ::testing::Test {
 protected:
  void SetUp() override { clear(); }
  void TearDown() override { clear(); }
  static void clear() {
    for (const char* name :
         {"BOOK_CLUSTER_NODES", "BOOK_CLUSTER_RANKS_PER_NODE", "BOOK_CLUSTER_RATE",
          "BOOK_CLUSTER_RATE_BITS", "BOOK_CLUSTER_TCP_BYTES_PER_S"})
      unsetenv(name);
  }
  static void set(const char* name, const char* value) { setenv(name, value, 1); }
};

TEST_F(ClusterLayoutTest, ReadsWhatTheScriptSets) {
  set("BOOK_CLUSTER_NODES", "2");
  set("BOOK_CLUSTER_RANKS_PER_NODE", "3");
  set("BOOK_CLUSTER_RATE", "100mbit");
  set("BOOK_CLUSTER_RATE_BITS", "100000000");
  set("BOOK_CLUSTER_TCP_BYTES_PER_S", "11900000");
  ASSERT_TRUE(in_cluster());
  const ClusterLayout layout = cluster_layout(6);
  EXPECT_EQ(layout.nodes, 2);
  EXPECT_EQ(layout.ranks_per_node, 3);
  EXPECT_EQ(layout.link_bits_per_s, 1e8);
  EXPECT_EQ(layout.tcp_bytes_per_s, 11.9e6);
  EXPECT_EQ(layout.rate, "100mbit");
  EXPECT_EQ(layout.node_of(0), 0);
  EXPECT_EQ(layout.node_of(2), 0);
  EXPECT_EQ(layout.node_of(3), 1);
  EXPECT_EQ(layout.node_of(5), 1);
  EXPECT_NE(layout.describe().find("2 nodes x 3 ranks, links of 100mbit"), std::string::npos);
}

TEST_F(ClusterLayoutTest, TheRateAndCeilingAreOptional) {
  set("BOOK_CLUSTER_NODES", "1");
  set("BOOK_CLUSTER_RANKS_PER_NODE", "1");
  const ClusterLayout layout = cluster_layout(1);
  EXPECT_EQ(layout.link_bits_per_s, 0);
  EXPECT_EQ(layout.tcp_bytes_per_s, 0);
  set("BOOK_CLUSTER_RATE", "none");
  EXPECT_NE(cluster_layout(1).describe().find("unlimited links"), std::string::npos);
}

TEST_F(ClusterLayoutTest, RefusesOutsideTheCluster) {
  EXPECT_FALSE(in_cluster());
  expect_error([] { cluster_layout(4); }, "tools/cluster/cluster.sh run");
}

TEST_F(ClusterLayoutTest, RefusesALayoutThatIsNotTheWorld) {
  set("BOOK_CLUSTER_NODES", "2");
  set("BOOK_CLUSTER_RANKS_PER_NODE", "2");
  expect_error([] { cluster_layout(3); }, "2 nodes x 2 ranks but MPI started 3 processes");
}

TEST_F(ClusterLayoutTest, RefusesValuesThatDoNotParse) {
  set("BOOK_CLUSTER_NODES", "two");
  set("BOOK_CLUSTER_RANKS_PER_NODE", "2");
  expect_error([] { cluster_layout(4); }, "BOOK_CLUSTER_NODES='two' is not a non-negative number");
  set("BOOK_CLUSTER_NODES", "0");
  expect_error([] { cluster_layout(0); }, "whole numbers of at least 1");
  set("BOOK_CLUSTER_NODES", "1.5");
  expect_error([] { cluster_layout(3); }, "whole numbers of at least 1");
  set("BOOK_CLUSTER_NODES", "2");
  set("BOOK_CLUSTER_RATE_BITS", "-5");
  expect_error([] { cluster_layout(4); }, "BOOK_CLUSTER_RATE_BITS='-5'");
  unsetenv("BOOK_CLUSTER_RANKS_PER_NODE");
  expect_error([] { cluster_layout(4); }, "BOOK_CLUSTER_RANKS_PER_NODE is not set");
}

}  // namespace
}  // namespace book::coll
