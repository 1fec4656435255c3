;;; Drives Emacs headless with the documented eglot configuration
;;; (docs/editors/emacs-eglot.el): open a file, wait for torch-syncfree's
;;; diagnostics (flymake), apply its quick fix, save, wait for the refreshed
;;; diagnostics. Positions are checked on a line with non-ASCII text before
;;; the finding (eglot counts UTF-16 code units, Emacs characters).
;;; Prints to the file named by $EMACS_OUT. No clock: each wait ends when the
;;; server has answered (lit's per-test limit is the only limit).
(package-initialize)
(load (getenv "EMACS_CONFIG"))
(require 'flymake)
(defvar session-out (getenv "EMACS_OUT"))
(defun session-log (fmt &rest args)
  (append-to-file (concat (apply #'format fmt args) "\n") nil session-out))
(defun session-wait (pred)
  (while (not (funcall pred))
    (accept-process-output nil 0.05)))
(defun session-diagnostics ()
  (sort (flymake-diagnostics)
        (lambda (a b) (< (flymake-diagnostic-beg a) (flymake-diagnostic-beg b)))))
(defun session-show ()
  (dolist (d (session-diagnostics))
    (let ((beg (flymake-diagnostic-beg d)))
      (session-log "diagnostic: %d:%d %s"
                   (line-number-at-pos beg)
                   ;; characters from the line's start (not `current-column':
                   ;; a visual column, where the emoji is two wide)
                   (save-excursion (goto-char beg) (- beg (line-beginning-position)))
                   (car (split-string (flymake-diagnostic-text d) ";"))))))

(find-file (getenv "EMACS_FILE"))
(session-log "major mode: %s" major-mode)
;; eglot-ensure connects after the command that opened the file; in batch
;; there is no command loop, so that hook is run here.
(run-hooks 'post-command-hook)
(session-wait (lambda () (eglot-current-server)))
(session-wait (lambda () (session-diagnostics)))
(session-log "first diagnostics: %d" (length (session-diagnostics)))
(session-show)

;; The quick fix on the first diagnostic's line, applied as eglot does.
(let* ((first (car (session-diagnostics)))
       (line (line-number-at-pos (flymake-diagnostic-beg first))))
  (goto-char (flymake-diagnostic-beg first))
  (let* ((actions (eglot-code-actions (line-beginning-position) (line-end-position)))
         (action (or (cl-find-if (lambda (a) (plist-get a :isPreferred)) actions) (car actions))))
    (session-log "code action: %s %s" (plist-get action :kind) (plist-get action :title))
    (eglot--apply-workspace-edit (plist-get action :edit)))
  (goto-char (point-min))
  (forward-line (1- line))
  (session-log "line after fix: %s"
               (buffer-substring-no-properties (line-beginning-position) (line-end-position))))

;; Saving sends didSave; the server analyses again and publishes fewer findings.
(let ((before (length (session-diagnostics))))
  (save-buffer)
  (session-wait (lambda () (< (length (session-diagnostics)) before))))
(session-log "after save: %d" (length (session-diagnostics)))
(session-show)
(eglot-shutdown (eglot-current-server))
(session-log "done")
