-- Neovim headless, with the documented configuration, on a project laid out as
-- real ones are (nvim.test's second run): a source whose first include is its
-- own project header, found through -I, which includes LibTorch. Opens it, waits
-- for the diagnostics; adds a comment above the includes (an edit of the include
-- block) and writes; waits for the diagnostics one line lower; opens a second
-- source with the same block. Prints to the file named by $NVIM_OUT.
local out = io.open(os.getenv('NVIM_OUT'), 'w')
local function log(...) out:write(table.concat({ ... }, ' '), '\n'); out:flush() end
-- Waits for cond with no limit of its own (lit's per-test limit is the only
-- one: a slow machine must not fail the test); events are processed meanwhile.
local function wait_for(cond)
  while not vim.wait(1000, cond, 50) do end
  return true
end
local function diagnostics(buf)
  local list = vim.diagnostic.get(buf)
  table.sort(list, function(a, b) return a.lnum < b.lnum or (a.lnum == b.lnum and a.col < b.col) end)
  return list
end
local function show(list)
  for _, d in ipairs(list) do
    log(string.format('diagnostic: %d:%d %s', d.lnum, d.col, d.code or '?'))
  end
end

vim.cmd('edit ' .. vim.fn.fnameescape(os.getenv('NVIM_FILE')))
local first = vim.api.nvim_get_current_buf()
local ok = wait_for(function() return #diagnostics(first) > 0 end)
log('first diagnostics:', tostring(ok))
show(diagnostics(first))

local line = diagnostics(first)[1].lnum
vim.api.nvim_buf_set_lines(first, 0, 0, false, { '// a comment above the includes' })
vim.cmd('write')
ok = wait_for(function()
  local list = diagnostics(first)
  return #list > 0 and list[1].lnum == line + 1
end)
log('after the include-block edit:', tostring(ok))
show(diagnostics(first))

vim.cmd('edit ' .. vim.fn.fnameescape(os.getenv('NVIM_FILE2')))
local second = vim.api.nvim_get_current_buf()
ok = wait_for(function() return #diagnostics(second) > 0 end)
log('second file diagnostics:', tostring(ok))
show(diagnostics(second))
out:close()
vim.cmd('qa!')
