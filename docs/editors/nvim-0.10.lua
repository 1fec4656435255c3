-- torch-syncfree's language server in Neovim 0.10 and later (vim.lsp.start
-- reuses one client per root directory).
vim.api.nvim_create_autocmd('FileType', {
  pattern = { 'cpp', 'cuda' },
  callback = function()
    vim.lsp.start({
      name = 'torch-syncfree',
      cmd = { os.getenv('TORCH_SYNCFREE') or 'torch-syncfree', '--lsp' },
      root_dir = vim.fs.root(0, { 'compile_commands.json', 'build', '.git' }),
    })
  end,
})
