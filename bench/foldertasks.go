package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/locumdev/locum/gitsafe"
	"github.com/locumdev/locum/rails"
	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/untrusted"
)

// folderTasks reads the bench folder and makes its tasks: each at its commit, or at a commit
// made of its snapshot in the repository's object store (the working tree and index untouched),
// its oracle's hidden files read once. The folder is the operator's to name; what it holds is
// anyone's, so it is read as the repository's files are: bench.json bounded and strict, every
// folder it names inside it after symbolic links, a snapshot's git directories and special files
// left out.
func (w *run) folderTasks(ctx context.Context) ([]task, error) {
	dir, err := filepath.EvalSymlinks(w.folder)
	if err == nil {
		var st os.FileInfo
		if st, err = os.Stat(dir); err == nil && !st.IsDir() {
			err = fmt.Errorf("not a folder")
		}
	}
	if err != nil {
		return nil, engine.BadInputf("--tasks %s: %v", untrusted.Escape(w.folder), err)
	}
	file := filepath.Join(w.folder, FolderFile)
	data, err := untrusted.ReadFileIn(dir, FolderFile, untrusted.ConfigCap)
	if err != nil {
		return nil, engine.BadInputf("--tasks: %v", err)
	}
	list, err := ParseFolder(w.job.Layer.Validator(), file, data)
	if err != nil {
		return nil, engine.BadInputf("%s", err.Error())
	}
	var out []task
	for _, ft := range list {
		t, err := w.folderTask(ctx, dir, ft)
		if err != nil {
			return nil, engine.BadInputf("%s: task %s: %v", untrusted.Escape(file), ft.ID, err)
		}
		out = append(out, t)
	}
	return out, nil
}

func (w *run) folderTask(ctx context.Context, dir string, ft FolderTask) (task, error) {
	name := cmpOr(ft.Mode, defaultFolderMode)
	m, ok := engine.LookupMode(name)
	if !ok || m.Tool == nil || !m.EditsInPlace || m.Model != engine.ChatModel {
		return task{}, fmt.Errorf("mode %s is no mode that edits a span of a file in place with a chat model", untrusted.Escape(name))
	}
	values := map[string]string{toolArgFile: ft.File, toolArgLines: ft.Lines, toolArgSymbol: ft.Symbol, toolArgTask: ft.Task, toolArgVerify: ft.Verify}
	args, ok := toolArgs(m, values)
	if !ok {
		return task{}, fmt.Errorf("mode %s takes arguments the task does not give", m.Name)
	}
	commit := ft.Commit
	if ft.Snapshot != "" {
		src, err := folderDir(dir, ft.Snapshot)
		if err != nil {
			return task{}, fmt.Errorf("snapshot: %w", err)
		}
		if commit, err = w.snapshotCommit(ctx, src, ft.ID); err != nil {
			return task{}, fmt.Errorf("snapshot %s: %w", untrusted.Escape(ft.Snapshot), err)
		}
	} else if _, err := gitsafe.Run(ctx, w.place.Root, "cat-file", "-e", commit+"^{commit}"); err != nil {
		return task{}, fmt.Errorf("commit %s is not a commit of this repository", commit)
	}
	tree := treeOf(ctx, w.place.Root, commit)
	var o *oracle
	digest := ""
	if ft.Oracle != nil {
		o = &oracle{command: ft.Oracle.Command}
		if ft.Oracle.Files != "" {
			src, err := folderDir(dir, ft.Oracle.Files)
			if err != nil {
				return task{}, fmt.Errorf("oracle files: %w", err)
			}
			if o.files, digest, err = readOracleFiles(src); err != nil {
				return task{}, fmt.Errorf("oracle files %s: %w", untrusted.Escape(ft.Oracle.Files), err)
			}
		}
	}
	oracleCommand := ""
	if o != nil {
		oracleCommand = o.command
	}
	return task{key: SourceFolder + "/" + ft.ID, source: SourceFolder,
		fingerprint: fingerprintOf(SourceFolder, m.Name, args, tree, oracleCommand, digest),
		edit:        &editTask{mode: m, args: args, commit: commit, oracle: o}}, nil
}

// snapshotRefPrefix is where a bench keeps its snapshots' commits while it runs: a ref for each,
// under the run's id, so git's housekeeping keeps them and a resume finds a killed run's.
const snapshotRefPrefix = "refs/locum/bench/"

// snapshotCommit commits the files of src as they are, in a worktree of the run with no checkout
// and an empty index, so neither the person's working tree nor their index changes: a commit
// with no parent, which a ref of the run keeps until it ends.
func (w *run) snapshotCommit(ctx context.Context, src, id string) (string, error) {
	head, err := gitsafe.Head(ctx, w.place.Root)
	if err != nil {
		return "", fmt.Errorf("the repository has no commit to make the bench's worktrees from: %w", err)
	}
	wt, err := gitsafe.WorktreeDir(w.place.Root, w.r.ID+"/snapshot-"+id)
	if err == nil {
		wt, err = w.g.AddDetached(ctx, wt, head, true)
	}
	if err != nil {
		return "", err
	}
	defer w.g.Drop(ctx, wt)
	if _, err := gitsafe.Run(ctx, wt, "read-tree", "--empty"); err != nil {
		return "", err
	}
	if err := rails.CopyTree(src, wt); err != nil {
		return "", err
	}
	if _, err := gitsafe.Run(ctx, wt, "add", "--all", "--force", "--", "."); err != nil {
		return "", err
	}
	tree, err := gitsafe.Run(ctx, wt, "write-tree")
	if err != nil {
		return "", err
	}
	args := append(gitsafe.Identity(ctx, wt), "commit-tree", strings.TrimSpace(tree), "-m", "locum bench "+w.r.ID+": snapshot "+id)
	out, err := gitsafe.Run(ctx, wt, args...)
	if err != nil {
		return "", err
	}
	commit := strings.TrimSpace(out)
	ref := snapshotRefPrefix + w.r.ID + "/" + id
	if _, err := w.g.Locked(ctx, w.place.Root, "update-ref", ref, commit); err != nil {
		return "", err
	}
	w.refs = append(w.refs, ref)
	return commit, nil
}
