// Megatron-Bridge's pretraining recipes as the values their functions set (generated from its
// source by tools/megatron_bridge/recipes.py): what `--from bridge` starts from when a launch
// names one of NVIDIA's recipes instead of the vanilla GPT recipe.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace paraplan::engines {

struct BridgeRecipe {
  std::string name;   ///< the function run_recipe.py --recipe names
  std::string hf_id;  ///< the model it builds, from its Hugging Face config (AutoBridge)
  /// "section.field" → the value the recipe sets, as an override writes it ("?": an expression
  /// the generator does not follow), in key order.
  std::vector<std::pair<std::string, std::string>> values;
};

/// Every pretraining recipe of Megatron-Bridge 067f987 whose function the generator follows.
const std::vector<BridgeRecipe>& megatron_bridge_recipes();
/// The recipes' other names (run_recipe.py takes either): alias → recipe.
const std::vector<std::pair<std::string, std::string>>& megatron_bridge_recipe_aliases();
/// The recipe a name or alias gives, or nullptr.
const BridgeRecipe* find_megatron_bridge_recipe(const std::string& name);

}  // namespace paraplan::engines
