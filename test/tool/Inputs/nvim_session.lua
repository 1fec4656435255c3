-- Drives Neovim headless with the documented configuration: open a file,
-- wait for torch-syncfree's diagnostics, apply its quick fix, write the file,
-- wait for the refreshed diagnostics. Prints to the file named by $NVIM_OUT.
local out = io.open(os.getenv('NVIM_OUT'), 'w')
local function log(...) out:write(table.concat({ ... }, ' '), '\n'); out:flush() end
-- Waits for cond with no limit of its own (lit's per-test limit is the only
-- one: a slow machine must not fail the test); events are processed meanwhile.
local function wait_for(cond)
  while not vim.wait(1000, cond, 50) do end
  return true
end
local function diagnostics()
  local list = vim.diagnostic.get(0)
  table.sort(list, function(a, b) return a.lnum < b.lnum or (a.lnum == b.lnum and a.col < b.col) end)
  return list
end
local function show(list)
  for _, d in ipairs(list) do
    log(string.format('diagnostic: %d:%d %s %s', d.lnum, d.col, d.code or '?', (d.message:gsub(';.*', ''))))
  end
end

vim.cmd('edit ' .. vim.fn.fnameescape(os.getenv('NVIM_FILE')))
local ok = wait_for(function() return #diagnostics() > 0 end)
log('first diagnostics:', tostring(ok))
show(diagnostics())

-- The quick fix on the line of the first diagnostic, applied as the editor does.
local first = diagnostics()[1]
local client = vim.lsp.get_active_clients()[1]
local params = {
  textDocument = vim.lsp.util.make_text_document_params(),
  range = { start = { line = first.lnum, character = 0 }, ['end'] = { line = first.lnum, character = 0 } },
  context = { diagnostics = {} },
}
local responses = vim.lsp.buf_request_sync(0, 'textDocument/codeAction', params, 2147483647)
for _, response in pairs(responses or {}) do
  for _, action in ipairs(response.result or {}) do
    log('code action:', action.kind, tostring(action.isPreferred), action.title)
    vim.lsp.util.apply_workspace_edit(action.edit, client.offset_encoding)
  end
end
log('line after fix:', vim.api.nvim_buf_get_lines(0, first.lnum, first.lnum + 1, false)[1])

-- :write sends didSave; the server analyses again and publishes.
local before = #diagnostics()
vim.cmd('write')
ok = wait_for(function() return #diagnostics() < before end)
log('after save:', tostring(ok))
show(diagnostics())
out:close()
vim.cmd('qa!')
