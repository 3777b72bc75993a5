// Random min-sum networks for the intra-op planners' twins (tests only).
#pragma once

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <vector>

#include "cost/intra_op_network.h"

namespace paraplan::testing_support {

/// A random min-sum network over a random graph.
inline IntraOpNetwork random_network(std::mt19937& rng) {
  std::uniform_int_distribution<int> nvar(1, 6), dom(1, 4), ncls(1, 3);
  std::uniform_real_distribution<double> cost(0, 10);
  IntraOpNetwork net;
  int n = nvar(rng);
  for (int v = 0; v < n; ++v) {
    int k = dom(rng);
    std::vector<double> u(k);
    for (auto& x : u) x = std::round(cost(rng));  // integers: ties happen
    net.unary.push_back(u);
  }
  std::bernoulli_distribution edge(0.5);
  for (int a = 0; a < n; ++a)
    for (int b = a + 1; b < n; ++b) {
      if (!edge(rng)) continue;
      PairFactor p;
      p.u = a;
      p.v = b;
      p.u_classes = std::min<int>(ncls(rng), static_cast<int>(net.unary[a].size()));
      p.v_classes = std::min<int>(ncls(rng), static_cast<int>(net.unary[b].size()));
      for (std::size_t c = 0; c < net.unary[a].size(); ++c)
        p.u_class.push_back(static_cast<int>(c) % p.u_classes);
      for (std::size_t c = 0; c < net.unary[b].size(); ++c)
        p.v_class.push_back(static_cast<int>(c) % p.v_classes);
      std::shuffle(p.u_class.begin(), p.u_class.end(), rng);
      std::shuffle(p.v_class.begin(), p.v_class.end(), rng);
      // Classes must all be used for the table to be meaningful; renumber densely.
      for (auto* cls : {&p.u_class, &p.v_class}) {
        std::vector<int> id(8, -1);
        int next = 0;
        for (int& c : *cls) {
          if (id[c] < 0) id[c] = next++;
          c = id[c];
        }
        (cls == &p.u_class ? p.u_classes : p.v_classes) = next;
      }
      std::vector<double> table(static_cast<std::size_t>(p.u_classes) * p.v_classes);
      for (auto& x : table) x = std::round(cost(rng));
      p.cost = std::make_shared<const std::vector<double>>(std::move(table));
      net.pairs.push_back(std::move(p));
    }
  return net;
}

}  // namespace paraplan::testing_support
