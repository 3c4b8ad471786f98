#pragma once
// The accuracy contract of the training ops (docs/accuracy.md, "Training
// ops"): per-element bounds of output number `output` (hal::for_each_tensor's
// order) of a call as the fp64 oracle ran it. `finish(E, ref)` applies the
// final rounding to the output dtype and the safety factor (contract.cpp's
// Finisher), so each function states only the fp32 compute error E.
#include <functional>
#include <span>
#include <vector>

#include "hal/op.h"

namespace hal::conformance::contract {

using Finish = std::function<double(double compute_err, double ref)>;

std::vector<double> training_bounds(const SoftmaxBackwardCall& c, std::size_t output, std::span<const double> ref,
                                    const Finish& finish);
std::vector<double> training_bounds(const NormBackwardCall& c, std::size_t output, std::span<const double> ref,
                                    const Finish& finish);
std::vector<double> training_bounds(const UnaryBackwardCall& c, std::size_t output, std::span<const double> ref,
                                    const Finish& finish);
std::vector<double> training_bounds(const SwigluBackwardCall& c, std::size_t output, std::span<const double> ref,
                                    const Finish& finish);
std::vector<double> training_bounds(const CrossEntropyCall& c, std::size_t output, std::span<const double> ref,
                                    const Finish& finish);
std::vector<double> training_bounds(const EmbeddingBackwardCall& c, std::size_t output, std::span<const double> ref,
                                    const Finish& finish);
std::vector<double> training_bounds(const AdamwCall& c, std::size_t output, std::span<const double> ref,
                                    const Finish& finish);
std::vector<double> training_bounds(const GlobalNormCall& c, std::size_t output, std::span<const double> ref,
                                    const Finish& finish);
std::vector<double> training_bounds(const AttentionBackwardCall& c, std::size_t output, std::span<const double> ref,
                                    const Finish& finish);
// rope_backward: rope's bound (contract.cpp) with dy for x; the inverse
// rotation negates sin exactly, so the analysis is the forward's.

}  // namespace hal::conformance::contract
