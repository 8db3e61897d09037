//go:build linux

package follow

import "golang.org/x/sys/unix"

// Magic numbers of file systems whose changes made elsewhere inotify does
// not see (statfs(2)); GNU tail polls them too.
var remoteFS = map[uint32]string{
	0x6969:     "nfs",
	0x517b:     "smb",
	0xff534d42: "cifs",
	0xfe534d42: "smb2",
	0x5346414f: "afs",
	0x73757245: "coda",
	0x564c:     "ncp",
	0x01021997: "9p",
	0x00c36400: "ceph",
	0x65735546: "fuse",
	0x0bd00bd0: "lustre",
	0x01161970: "gfs2",
	0x7461636f: "ocfs2",
}

// remote returns the name of dir's file system when it is a network one.
func remote(dir string) string {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return ""
	}
	return remoteFS[uint32(st.Type)]
}
