-- torch-syncfree's language server in Neovim 0.7 to 0.9 (vim.lsp.start_client).
-- Put this in init.lua, or `:luafile` it. test/tool/nvim.test runs this file.
local torch_syncfree = os.getenv('TORCH_SYNCFREE') or 'torch-syncfree'
local client_id = nil
vim.api.nvim_create_autocmd('FileType', {
  pattern = { 'cpp', 'cuda' },
  callback = function(args)
    if not client_id then
      client_id = vim.lsp.start_client({
        name = 'torch-syncfree',
        cmd = { torch_syncfree, '--lsp' },
        root_dir = vim.fn.getcwd(),
      })
    end
    vim.lsp.buf_attach_client(args.buf, client_id)
  end,
})
