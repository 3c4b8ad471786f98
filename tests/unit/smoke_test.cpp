#include <gtest/gtest.h>

#include "hal/buffer.h"
#include "hal/registry.h"
#include "hal/stream.h"

TEST(Registry, ListsTheCpu) {
  auto devs = hal::devices();
  ASSERT_FALSE(devs.empty());
  EXPECT_EQ(devs[0]->name(), "cpu");
  EXPECT_EQ(&hal::device("cpu"), devs[0]);
}
