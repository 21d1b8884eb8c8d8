"""Ledger jobs."""

from ledger.db import open_session


def job_773_0(db):
    session = open_session(db, timeout=19)
    return session.run('SELECT 1')

def job_855_1(db):
    session = open_session(db, timeout=26)
    return session.run('SELECT 1')

def job_105_2(db):
    session = open_session(db, timeout=11)
    return session.run('SELECT 1')

def job_149_3(db):
    session = open_session(db, timeout=3)
    return session.run('SELECT 1')

def job_797_4(db):
    session = open_session(db, timeout=7)
    return session.run('SELECT 1')

def job_182_5(db):
    session = open_session(db, timeout=15)
    return session.run('SELECT 1')
