-- Tables, strings and closures in Lua 5.4 (its allocator is realloc through
-- l_alloc): binary trees built and walked, strings concatenated and
-- gsub'd, a table of records sorted; scale rounds.
local scale, seed = tonumber(arg[1]), tonumber(arg[2])
local state = seed
local function rnd(n) state = (state * 1103515245 + 12345) % 2147483648; return state % n end
local function tree(depth)
  if depth == 0 then return {} end
  return {left = tree(depth - 1), right = tree(depth - 1), tag = "n" .. depth}
end
local function check(t) if not t.left then return 1 end return 1 + check(t.left) + check(t.right) end
local total = 0
for round = 1, scale do
  for i = 1, 40 do total = total + check(tree(6 + rnd(6))) end
  local parts, records = {}, {}
  for i = 1, 3000 do
    local word = string.rep(string.char(97 + rnd(26)), 1 + rnd(12)) .. tostring(rnd(1000))
    parts[#parts + 1] = word
    records[i] = {name = word, weight = rnd(100000), f = function(x) return x + i end}
  end
  local text = table.concat(parts, " ")
  local upper = text:gsub("[aeiou]", string.upper)
  table.sort(records, function(a, b) return a.weight < b.weight or (a.weight == b.weight and a.name < b.name) end)
  total = total + #upper + records[1].f(records[#records].weight)
end
print(total)
