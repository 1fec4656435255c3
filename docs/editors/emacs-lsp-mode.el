;;; torch-syncfree's language server in Emacs with lsp-mode (Debian's
;;; elpa-lsp-mode 8). Put this in init.el, or `load' it.
(require 'lsp-mode)
(defvar torch-syncfree-program (or (getenv "TORCH_SYNCFREE") "torch-syncfree")
  "The torch-syncfree command (on the PATH, or a path).")
(lsp-register-client
 (make-lsp-client
  :new-connection (lsp-stdio-connection (lambda () (list torch-syncfree-program "--lsp")))
  :activation-fn (lsp-activate-on "cpp" "c" "cuda")
  ;; An add-on: it runs beside clangd (lsp-mode runs every add-on server of a mode).
  :add-on? t
  :server-id 'torch-syncfree))
(add-hook 'c++-mode-hook #'lsp-deferred)
;; A quick fix: M-x lsp-execute-code-action on the finding's line.
