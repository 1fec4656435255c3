;;; torch-syncfree's language server in Emacs with eglot (Emacs 28 with
;;; Debian's elpa-eglot 1.9, or Emacs 29+ where eglot is built in).
;;; Put this in init.el, or `load' it. test/tool/emacs.test runs this file.
(require 'eglot)
(defvar torch-syncfree-program (or (getenv "TORCH_SYNCFREE") "torch-syncfree")
  "The torch-syncfree command (on the PATH, or a path).")
;; eglot runs one server per major mode: this makes torch-syncfree the C++
;; server (pair it with clangd through a multiplexer such as lspx to have both).
(add-to-list 'eglot-server-programs
             `((c++-mode c-mode cuda-mode c++-ts-mode) . (,torch-syncfree-program "--lsp")))
(add-hook 'c++-mode-hook #'eglot-ensure)
;; A quick fix: M-x eglot-code-actions on the finding's line (or C-c a if bound).
